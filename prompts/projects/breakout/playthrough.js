// Scripted playthroughs of the Breakout task, run by `coherence project` in the sandboxed worker
// after the headless harness (`__h`) and the artifact's scripts. Each scenario is a generator:
// one `yield` per display frame (the worker runs promise jobs between frames). Scenarios read
// the game through the test hook the specification requires (`window.BREAKOUT.getState()` and
// `setBall`) and record verdicts with `H.probe(name, 'met' | 'partial' | 'missing', detail)`.
// A probe that is never recorded counts as missing, with the scenario's reason.
var __scenarios = (function () {
  'use strict';
  var W = 800;

  function hook() {
    var b = globalThis.BREAKOUT;
    return b && typeof b.getState === 'function' ? b : null;
  }
  function snap() {
    var b = hook();
    if (!b) return null;
    try {
      var s = b.getState();
      return s && typeof s === 'object' ? s : null;
    } catch (e) {
      __h.error('getState', e);
      return null;
    }
  }
  function num(v) { return typeof v === 'number' && isFinite(v); }
  function ballOf(s) { return s && s.ball && num(s.ball.x) && num(s.ball.y) ? s.ball : null; }
  function paddleOf(s) { return s && s.paddle && num(s.paddle.x) ? s.paddle : null; }

  // Held keys, released and pressed only when they change.
  var held = {};
  function hold(code, on) {
    if (!!held[code] === !!on) return;
    held[code] = !!on;
    __h.key(on ? 'keydown' : 'keyup', code);
  }
  function releaseAll() { hold('ArrowLeft', false); hold('ArrowRight', false); }
  function steer(target, s) {
    var p = paddleOf(s);
    if (!p) return;
    var centre = p.x + (num(p.w) ? p.w : 100) / 2;
    hold('ArrowLeft', centre > target + 6);
    hold('ArrowRight', centre < target - 6);
  }
  // Where a descending ball will cross the paddle line, walls included.
  function landing(s) {
    var b = ballOf(s), p = paddleOf(s);
    if (!b || !p || !num(b.vy) || b.vy <= 0) return b ? b.x : W / 2;
    var r = num(b.r) ? b.r : 8;
    var t = ((num(p.y) ? p.y : 560) - r - b.y) / b.vy;
    var x = b.x + (num(b.vx) ? b.vx : 0) * t;
    var lo = r, span = W - 2 * r;
    var k = ((x - lo) % (2 * span) + 2 * span) % (2 * span);
    return lo + (k <= span ? k : 2 * span - k);
  }
  var OFFSETS = [-0.35, 0.2, -0.1, 0.4, -0.25, 0.05, 0.3, -0.45, 0.15, -0.05];
  var hits = 0;
  function follow(s) {
    var p = paddleOf(s);
    var half = p && num(p.w) ? p.w / 2 : 60;
    steer(landing(s) - OFFSETS[hits % OFFSETS.length] * half, s);
  }
  function avoid(s) {
    var b = ballOf(s);
    steer(b && b.x < W / 2 ? W - 40 : 40, s);
  }
  function noHook(names) {
    names.forEach(function (n) { __h.probe(n, 'missing', 'no window.BREAKOUT.getState() test hook'); });
  }
  function launch() { __h.press('Space'); }
  // Counts frames in which a ball in play did not move; a soft-locked game stops a loop early.
  function stillness() {
    var last = null, still = 0;
    return function (s) {
      var b = ballOf(s);
      var key = b ? b.x + ',' + b.y : '';
      still = s && s.state === 'playing' && key === last ? still + 1 : 0;
      last = key;
      return still > 300;
    };
  }

  // Launches and follows the ball until `done(state)` holds or `frames` pass; relaunches after
  // a miss. Returns the last snapshot.
  function* playUntil(done, frames, onFrame) {
    var s = snap();
    for (var i = 0; i < frames; i++) {
      s = snap();
      if (!s) return null;
      if (done(s)) return s;
      if (s.state === 'ready') { releaseAll(); launch(); }
      follow(s);
      __h.tick();
      if (onFrame) onFrame(snap());
      yield;
    }
    return snap();
  }

  var scenarios = {};

  scenarios.main = function* () {
    var s0 = snap();
    __h.probe('hook', s0 && typeof hook().setBall === 'function' ? 'met' : s0 ? 'partial' : 'missing',
      s0 ? 'getState() answers' + (typeof hook().setBall === 'function' ? ' and setBall exists' : ' but setBall is missing') : 'window.BREAKOUT.getState is not a function after load');
    var globals = __h.newGlobals().filter(function (k) { return k !== 'BREAKOUT'; });
    __h.probe('globals', globals.length === 0 ? 'met' : globals.length <= 3 ? 'partial' : 'missing',
      globals.length ? 'new globals: ' + globals.slice(0, 8).join(', ') : 'only BREAKOUT added to window');
    var lazyAudio = __h.audio.contexts === 0;
    if (!s0) {
      noHook(['grid_at_start', 'ready_launch', 'paddle_keys', 'paddle_clamp', 'frame_rate', 'walls', 'paddle_angle',
        'bricks_score', 'level_clear', 'combo', 'phasing', 'phasing_colour', 'pause', 'delegation', 'particles', 'sounds', 'events_runtime', 'palette_runtime']);
      for (var f = 0; f < 120; f++) { __h.tick(); yield; }
      return;
    }
    __h.probe('grid_at_start', s0.bricksLeft === 48 ? 'met' : 'missing', 'bricksLeft at start: ' + s0.bricksLeft);

    // Idle: the ball waits on the paddle.
    for (var i = 0; i < 30; i++) { __h.tick(); yield; }
    var idle = snap();
    var idleBall = ballOf(idle), p0 = paddleOf(idle);
    var resting = idle.state === 'ready' && idleBall && p0 && Math.abs(idleBall.x - (p0.x + p0.w / 2)) < 3 && idleBall.y < p0.y + 1;

    // Paddle: held keys move it, the walls stop it.
    hold('ArrowRight', true);
    for (i = 0; i < 20; i++) { __h.tick(); yield; }
    hold('ArrowRight', false);
    var right = paddleOf(snap());
    hold('ArrowLeft', true);
    for (i = 0; i < 40; i++) { __h.tick(); yield; }
    var left = paddleOf(snap());
    for (i = 0; i < 100; i++) { __h.tick(); yield; }
    var wallLeft = paddleOf(snap());
    hold('ArrowLeft', false);
    hold('ArrowRight', true);
    for (i = 0; i < 150; i++) { __h.tick(); yield; }
    var wallRight = paddleOf(snap());
    hold('ArrowRight', false);
    var moved = right && left && right.x > p0.x + 20 && left.x < right.x - 20;
    __h.probe('paddle_keys', moved ? 'met' : right && right.x > p0.x ? 'partial' : 'missing',
      'paddle x: start ' + (p0 && p0.x) + ', after ArrowRight ' + (right && right.x) + ', after ArrowLeft ' + (left && left.x));
    var clamped = wallLeft && wallRight && Math.abs(wallLeft.x) < 1 && Math.abs(wallRight.x + wallRight.w - W) < 1;
    __h.probe('paddle_clamp', clamped ? 'met' : wallLeft && wallLeft.x >= 0 && wallRight && wallRight.x + wallRight.w <= W ? 'partial' : 'missing',
      'paddle x against the left wall ' + (wallLeft && wallLeft.x) + ', right edge against the right wall ' + (wallRight && wallRight.x + wallRight.w));
    // Back to the middle.
    for (i = 0; i < 200; i++) { var c = snap(); steer(W / 2, c); __h.tick(); yield; }
    releaseAll();

    // Launch, and frame-rate independence: 60 Hz then 30 Hz for about a quarter second each.
    var before = snap();
    launch();
    __h.probe('audio_gesture', __h.audio.contexts >= 1 ? (lazyAudio ? 'met' : 'partial') : 'missing',
      !__h.audio.contexts ? 'no AudioContext after Space (initAudio never ran?)' :
        lazyAudio ? 'AudioContext created by the first gesture' : 'an AudioContext was created at load, before any gesture');
    __h.tick(); yield;
    var a = snap();
    for (i = 0; i < 15; i++) { __h.tick(1000 / 60); yield; }
    var b = snap();
    for (i = 0; i < 8; i++) { __h.tick(1000 / 30); yield; }
    var c2 = snap();
    var ba = ballOf(a), bb = ballOf(b), bc = ballOf(c2), bBefore = ballOf(before);
    var launched = a && a.state === 'playing' && bb && ba && bb.y < ba.y - 5;
    __h.probe('ready_launch', resting && launched ? 'met' : launched ? 'partial' : 'missing',
      (resting ? 'the ball waited on the paddle; ' : 'the ball did not wait on the paddle in state ready; ') +
      (launched ? 'Space launched it' : 'after Space: state ' + (a && a.state) + ', ball y ' + (bBefore && bBefore.y) + ' -> ' + (bb && bb.y)));
    if (ba && bb && bc) {
      var v60 = (ba.y - bb.y) / 0.25, v30 = (bb.y - bc.y) / (8 / 30);
      var ratio = v60 ? v30 / v60 : 0;
      __h.probe('frame_rate', ratio > 0.9 && ratio < 1.1 ? 'met' : ratio > 0.75 && ratio < 1.33 ? 'partial' : 'missing',
        'ball speed ' + Math.round(v60) + ' px/s at 60 Hz, ' + Math.round(v30) + ' px/s at 30 Hz');
    } else {
      __h.probe('frame_rate', 'missing', 'no ball position to measure');
    }

    // Play the level out.
    var prev = snap();
    var outOfBounds = 0, angles = {}, maxCombo = 0, maxDelta = 0, broken = 0, scoreRose = false;
    var phaseStart = -1, phaseLengths = [], phasingColour = 0, phasedAt = -1, particleFrames = 0, quietOps = -1;
    var relaunches = 0, restarts = 0, emptyFrames = 0;
    var brickFrame = -100;
    var lastState = prev.state;
    var stuckMain = stillness();
    for (var frame = 0; frame < 24000; frame++) {
      var s = snap();
      if (!s || stuckMain(s)) break;
      if (s.state === 'levelClear' || s.state === 'won') break;
      if (s.bricksLeft === 0) {
        if (++emptyFrames > 30) break;
      }
      if (s.state === 'ready') { releaseAll(); launch(); relaunches++; }
      if (s.state === 'gameOver') { launch(); restarts++; }
      if (s.state === 'paused') launch();
      follow(s);
      var stylesBefore = __h.canvas.styles['#7df9ff'] || 0;
      __h.tick();
      yield;
      var n = snap();
      if (!n) break;
      var nb = ballOf(n), pb = ballOf(s);
      if (nb && (nb.x < -1 || nb.x > W + 1 || nb.y < -1)) outOfBounds++;
      if (pb && nb && num(pb.vy) && num(nb.vy) && pb.vy > 0 && nb.vy < 0 && nb.y > 400) {
        angles[Math.round(nb.vx / 20)] = 1;
        hits++;
      }
      if (num(n.combo) && n.combo > maxCombo) maxCombo = n.combo;
      var brokenBefore = broken;
      if (num(n.bricksLeft) && num(s.bricksLeft) && n.bricksLeft < s.bricksLeft && n.bricksLeft > 0) {
        var gone = s.bricksLeft - n.bricksLeft;
        broken += gone;
        if (n.score > s.score) scoreRose = true;
        maxDelta = Math.max(maxDelta, (n.score - s.score) / gone);
        brickFrame = frame;
        if (quietOps < 0) quietOps = __h.canvas.lastFrameOps;
      }
      if (frame - brickFrame > 0 && frame - brickFrame <= 3 && quietOps >= 0 && __h.canvas.lastFrameOps > quietOps) particleFrames++;
      if (n.phasing && !s.phasing) { phaseStart = __h.now; if (phasedAt < 0) phasedAt = broken; }
      // A fifth brick broken while phasing starts the 3 s again.
      if (n.phasing && s.phasing && Math.floor(broken / 5) > Math.floor(brokenBefore / 5)) phaseStart = __h.now;
      if (!n.phasing && s.phasing && phaseStart >= 0 && n.state === 'playing' && s.state === 'playing') {
        phaseLengths.push(__h.now - phaseStart);
        phaseStart = -1;
      }
      if (n.phasing && (__h.canvas.styles['#7df9ff'] || 0) > stylesBefore) phasingColour++;
      if (n.state !== lastState) lastState = n.state;
    }
    releaseAll();
    var end = snap() || {};
    __h.probe('walls', outOfBounds === 0 && hits > 0 ? 'met' : outOfBounds === 0 ? 'partial' : 'missing',
      outOfBounds ? outOfBounds + ' frames with the ball outside the walls' : 'the ball stayed inside the walls for ' + __h.frame + ' frames');
    var distinct = Object.keys(angles).length;
    __h.probe('paddle_angle', distinct >= 3 ? 'met' : distinct === 2 ? 'partial' : 'missing',
      distinct + ' distinct outgoing angles over ' + hits + ' paddle hits');
    __h.probe('bricks_score', broken >= 5 && scoreRose ? 'met' : broken > 0 ? 'partial' : 'missing',
      broken + ' bricks broken, score ' + end.score);
    var cleared = end.state === 'levelClear' || end.state === 'won';
    __h.probe('combo', maxCombo >= 2 && maxDelta > 60 ? 'met' : maxCombo >= 2 || maxDelta > 60 ? 'partial' : 'missing',
      'largest combo ' + maxCombo + ', largest points for one brick ' + maxDelta);
    var phaseOk = phaseLengths.length > 0 && phaseLengths.every(function (l) { return l > 2700 && l < 3300; });
    __h.probe('phasing', phasedAt === 5 && phaseOk ? 'met' : phasedAt > 0 ? 'partial' : 'missing',
      phasedAt < 0 ? 'the ball never phased (' + broken + ' bricks broken)' :
        'first phase after ' + phasedAt + ' bricks; phase lengths ms: ' + phaseLengths.map(Math.round).slice(0, 5).join(', '));
    __h.probe('phasing_colour', phasingColour > 0 ? 'met' : 'missing',
      phasingColour ? 'the phasing colour #7df9ff was drawn on ' + phasingColour + ' phasing frames' : 'the phasing colour #7df9ff was never drawn while phasing');
    __h.probe('particles', particleFrames > 0 ? 'met' : 'missing',
      particleFrames ? 'more draw calls in the frames after a brick broke' : 'no extra drawing after a brick broke');
    __h.probe('sounds', __h.audio.started >= 3 ? 'met' : __h.audio.started > 0 ? 'partial' : 'missing',
      __h.audio.started + ' sound sources started');
    var types = Object.keys(__h.customEvents);
    __h.probe('events_runtime', types.length >= 4 ? 'met' : types.length > 0 ? 'partial' : 'missing',
      types.length ? 'custom events dispatched: ' + types.slice(0, 10).join(', ') : 'no CustomEvent was dispatched');
    var palette = ['#10131f', '#e63946', '#f4a261', '#e9c46a', '#2a9d8f', '#457b9d', '#8d5bd6', '#f1faee', '#ffd166'];
    var used = palette.filter(function (p) { return __h.canvas.styles[p]; });
    __h.probe('palette_runtime', used.length === palette.length ? 'met' : used.length >= 5 ? 'partial' : 'missing',
      used.length + ' of ' + palette.length + ' palette colours drawn' + (used.length < palette.length ? '; not drawn: ' + palette.filter(function (p) { return !__h.canvas.styles[p]; }).join(' ') : ''));
    if (!cleared && end.bricksLeft === 0) {
      __h.probe('level_clear', 'missing', 'no level clear: all bricks broken but the state stayed ' + end.state + ' (the win is unreachable)');
    } else if (!cleared) {
      __h.probe('level_clear', 'missing', 'no level clear after ' + __h.frame + ' frames: ' + end.bricksLeft + ' bricks left, state ' + end.state + ', ' + relaunches + ' relaunches, ' + restarts + ' restarts');
    } else {
      launch();
      for (i = 0; i < 5; i++) { __h.tick(); yield; }
      var next = snap() || {};
      var advanced = next.level === 2 && next.bricksLeft === 48;
      __h.probe('level_clear', advanced || end.state === 'won' ? 'met' : 'partial',
        'level cleared in state ' + end.state + '; after Space: level ' + next.level + ', ' + next.bricksLeft + ' bricks');
    }

    // Pause with P, then the delegated pause button.
    for (i = 0; i < 10; i++) { var r = snap(); if (r && r.state === 'ready') launch(); __h.tick(); yield; }
    __h.press('KeyP');
    var p1 = snap();
    for (i = 0; i < 20; i++) { __h.tick(); yield; }
    var p2 = snap();
    __h.press('KeyP');
    var frozen = p1 && p2 && p1.state === 'paused' && ballOf(p1) && ballOf(p2) && ballOf(p1).x === ballOf(p2).x && ballOf(p1).y === ballOf(p2).y;
    __h.probe('pause', frozen ? 'met' : p1 && p1.state === 'paused' ? 'partial' : 'missing',
      'after P: state ' + (p1 && p1.state) + (frozen ? ', the ball stood still' : ''));
    for (i = 0; i < 3; i++) { __h.tick(); yield; }
    var button = document.querySelector('[data-action="pause"]');
    var controls = document.getElementById('controls');
    var beforeClick = snap();
    __h.click(button);
    var afterClick = snap();
    var onButtons = document.querySelectorAll('[data-action]').filter(function (el) { return el._listeners && el._listeners.click && el._listeners.click.length; }).length;
    var onContainer = controls && controls._listeners && controls._listeners.click ? controls._listeners.click.length : 0;
    var toggled = beforeClick && afterClick && beforeClick.state === 'playing' && afterClick.state === 'paused';
    __h.probe('delegation', toggled && onButtons === 0 && onContainer > 0 ? 'met' : toggled ? 'partial' : 'missing',
      (button ? 'clicking the pause button: ' + (beforeClick && beforeClick.state) + ' -> ' + (afterClick && afterClick.state) : 'no [data-action="pause"] button') +
      '; click listeners on buttons ' + onButtons + ', on #controls ' + onContainer);
    __h.click(button);
    for (i = 0; i < 3; i++) { __h.tick(); yield; }
  };

  // Miss on purpose: a life goes, the ball waits, Space relaunches; the last miss ends the game.
  scenarios.miss = function* () {
    var s = snap();
    if (!s) { noHook(['miss_life', 'miss_relaunch', 'game_over']); return; }
    launch();
    var lives0 = s.lives, missed = null;
    for (var i = 0; i < 3000 && !missed; i++) {
      var n = snap();
      if (n && num(n.lives) && n.lives < lives0) missed = n;
      else { avoid(n); __h.tick(); yield; }
    }
    releaseAll();
    if (!missed) {
      __h.probe('miss_life', 'missing', 'no life lost after ' + __h.frame + ' frames of missing on purpose (lives ' + lives0 + ')');
      __h.probe('miss_relaunch', 'missing', 'never missed');
      __h.probe('game_over', 'missing', 'never missed');
      return;
    }
    for (i = 0; i < 10; i++) { __h.tick(); yield; }
    var w = snap(), wb = ballOf(w), wp = paddleOf(w);
    var waiting = w.state === 'ready' && wb && wp && Math.abs(wb.x - (wp.x + wp.w / 2)) < 3;
    __h.probe('miss_life', missed.lives === lives0 - 1 && waiting ? 'met' : 'partial',
      'lives ' + lives0 + ' -> ' + missed.lives + '; 10 frames later: state ' + w.state + (waiting ? ', ball on the paddle' : ''));
    var y0 = wb ? wb.y : 0;
    launch();
    for (i = 0; i < 10; i++) { __h.tick(); yield; }
    var l = snap(), lb = ballOf(l);
    var relaunched = l && l.state === 'playing' && lb && lb.y < y0 - 5;
    __h.probe('miss_relaunch', relaunched ? 'met' : 'missing',
      relaunched ? 'Space relaunched the ball after the miss' : 'soft-lock: after a miss and Space, state ' + (l && l.state) + ', ball y ' + y0 + ' -> ' + (lb && lb.y));
    var over = null, stuck = stillness();
    for (i = 0; i < 12000 && !over; i++) {
      var m = snap();
      if (!m || stuck(m)) break;
      if (m.state === 'gameOver') over = m;
      else {
        if (m.state === 'ready') launch();
        avoid(m);
        __h.tick();
        yield;
      }
    }
    releaseAll();
    if (!over) {
      var last = snap() || {};
      __h.probe('game_over', 'missing', 'no game over after missing on purpose: lives ' + last.lives + ', state ' + last.state);
      return;
    }
    launch();
    for (i = 0; i < 3; i++) { __h.tick(); yield; }
    var fresh = snap() || {};
    var reset = fresh.score === 0 && fresh.lives === lives0 && fresh.bricksLeft === 48 && (fresh.state === 'ready' || fresh.state === 'playing');
    __h.probe('game_over', reset ? 'met' : 'partial',
      'game over reached with lives ' + over.lives + '; after Space: state ' + fresh.state + ', score ' + fresh.score + ', lives ' + fresh.lives + ', ' + fresh.bricksLeft + ' bricks');
  };

  // Break a few bricks, then lose every life: the stored high score (5, below any real score) is
  // read at start, and the final score is written at the end.
  function* breakThenLose(probeName, privateMode) {
    var s = snap();
    if (!s) { noHook([probeName]); return; }
    var readBack = s.highScore === 5;
    var hudText = document.getElementById('high-score');
    var scored = yield* playUntil(function (x) { return x.score > 0 && x.state === 'playing'; }, 6000);
    var over = null, stuck = stillness();
    for (var i = 0; i < 12000 && !over; i++) {
      var m = snap();
      if (!m || stuck(m)) break;
      if (m.state === 'gameOver') over = m;
      else { if (m.state === 'ready') launch(); avoid(m); __h.tick(); yield; }
    }
    releaseAll();
    for (i = 0; i < 5; i++) { __h.tick(); yield; }
    var end = over || snap() || {};
    if (privateMode) {
      var errors = __h.errors.length;
      var tried = __h.storageThrows > 0;
      __h.probe(probeName, over && errors === 0 && tried ? 'met' : over && errors === 0 ? 'partial' : 'missing',
        (over ? 'game over reached' : 'no game over (state ' + end.state + ')') + ' with a throwing localStorage.setItem; ' +
        __h.storageThrows + ' throwing writes, ' + errors + ' uncaught errors' + (errors ? ': ' + __h.errors[0].message : ''));
      return;
    }
    var wrote = __h.storageWrites.some(function (w) { return w.key === 'breakout.highScore' && Number(w.value) === end.score; });
    var hudShows = hudText && String(hudText.textContent).trim() === '5';
    __h.probe(probeName, readBack && wrote ? 'met' : readBack || wrote ? 'partial' : 'missing',
      'stored 5 read back at start: ' + readBack + (hudShows ? ' (shown in #high-score)' : '') + '; final score ' + end.score +
      (scored ? '' : ' (no brick broken)') + ' written to breakout.highScore: ' + wrote);
  }
  scenarios.storage = function* () { yield* breakThenLose('high_score', false); };
  scenarios.private_mode = function* () { yield* breakThenLose('private_mode', true); };

  // Two bricks in one frame: the ball rises into the seam between two bottom-row bricks.
  scenarios.tunnel = function* () {
    var s = snap();
    if (!s || typeof hook().setBall !== 'function') { noHook(['two_bricks']); return; }
    launch();
    __h.tick(); yield;
    hook().setBall(400, 300, 0, -420);
    var hitAt = null, start = snap();
    for (var i = 0; i < 40 && !hitAt; i++) {
      __h.tick(); yield;
      var n = snap();
      if (n && n.bricksLeft < start.bricksLeft) hitAt = n;
    }
    for (i = 0; i < 4; i++) { __h.tick(); yield; }
    var after = snap() || {}, ab = ballOf(after);
    if (!hitAt) {
      __h.probe('two_bricks', 'missing', 'no brick broke with the ball sent into the seam at x=400');
      return;
    }
    var broken = start.bricksLeft - after.bricksLeft;
    var reflected = ab && num(ab.vy) && ab.vy > 0;
    __h.probe('two_bricks', reflected && broken <= 2 ? 'met' : reflected ? 'partial' : 'missing',
      (reflected ? 'reflected once' : 'tunnelled: the ball kept rising after hitting the seam') + '; ' + broken + ' bricks broken, vy ' + (ab && Math.round(ab.vy)));
  };

  return scenarios;
})();
