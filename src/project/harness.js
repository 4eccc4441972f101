// The headless browser of `coherence project`, evaluated in the sandboxed worker before the
// artifact's scripts: a small DOM built from the artifact's HTML, a canvas 2D context that
// records what is drawn, Web Audio nodes that count what is played, localStorage (optionally
// throwing like Safari's private mode), timers and requestAnimationFrame on a virtual clock, and
// key and click events. Everything the harness observes is collected in `__h` for the report.
// `__h.configure(options)` is called (by the setup script) before the artifact loads.
(function () {
  'use strict';
  var H = {
    now: 0,
    frame: 0,
    frameMs: 1000 / 60,
    errors: [],
    raf: [],
    rafId: 0,
    timers: [],
    timerId: 0,
    storageMode: 'normal',
    storage: {},
    storageWrites: [],
    storageThrows: 0,
    customEvents: {},
    audio: { contexts: 0, createdAtFrame: -1, started: 0, nodes: 0 },
    canvas: { ops: 0, frameOps: [], styles: {}, arcs: [], texts: [] },
    listeners: [],
    globalsBefore: null,
    html: '',
    maxErrors: 20,
  };
  globalThis.__h = H;

  // A seeded Math.random, so every run of an artifact plays the same game.
  var seed = 0x9e3779b9;
  Math.random = function () {
    seed = (seed + 0x6d2b79f5) | 0;
    var t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  // Verdicts of the task's runtime checks, by probe name: met, partial or missing, with a detail.
  H.probes = {};
  H.probe = function (name, verdict, detail) {
    H.probes[name] = { verdict: verdict, detail: String(detail === undefined ? '' : detail).slice(0, 300) };
  };
  H.report = function () {
    return {
      probes: H.probes,
      errors: H.errors,
      frames: H.frame,
      virtual_ms: Math.round(H.now),
      custom_events: H.customEvents,
      audio: H.audio,
      storage_writes: H.storageWrites.length,
      storage_throws: H.storageThrows,
      canvas_ops: H.canvas.ops,
    };
  };

  function describe(e) {
    if (e && typeof e === 'object' && 'message' in e) {
      var name = e.name || 'Error';
      return name + ': ' + String(e.message);
    }
    return 'thrown: ' + String(e);
  }
  H.describe = describe;
  H.error = function (phase, e) {
    var message = typeof e === 'string' ? e : describe(e);
    if (H.errors.length < H.maxErrors) {
      H.errors.push({ phase: phase, message: message.slice(0, 300), at_ms: Math.round(H.now), frame: H.frame });
    }
  };
  H.loadError = function (message) { H.error('load', String(message)); };

  // ---------------------------------------------------------------- events
  function Event(type, init) {
    init = init || {};
    this.type = String(type);
    this.bubbles = !!init.bubbles;
    this.cancelable = !!init.cancelable;
    this.defaultPrevented = false;
    this.target = null;
    this.currentTarget = null;
    this.timeStamp = H.now;
    this._stop = false;
    for (var k in init) { if (!(k in this)) this[k] = init[k]; }
  }
  Event.prototype.preventDefault = function () { this.defaultPrevented = true; };
  Event.prototype.stopPropagation = function () { this._stop = true; };
  Event.prototype.stopImmediatePropagation = function () { this._stop = true; this._stopNow = true; };
  function CustomEvent(type, init) {
    Event.call(this, type, init);
    this.detail = init && 'detail' in init ? init.detail : null;
  }
  CustomEvent.prototype = Object.create(Event.prototype);
  CustomEvent.prototype.constructor = CustomEvent;
  function KeyboardEvent(type, init) { Event.call(this, type, init); }
  KeyboardEvent.prototype = Object.create(Event.prototype);
  KeyboardEvent.prototype.constructor = KeyboardEvent;
  function MouseEvent(type, init) { Event.call(this, type, init); }
  MouseEvent.prototype = Object.create(Event.prototype);
  MouseEvent.prototype.constructor = MouseEvent;

  function EventTarget() { this._listeners = {}; }
  EventTarget.prototype.addEventListener = function (type, fn, options) {
    if (typeof fn !== 'function' && !(fn && typeof fn.handleEvent === 'function')) return;
    if (!this._listeners) this._listeners = {};
    var list = this._listeners[type] || (this._listeners[type] = []);
    if (list.indexOf(fn) < 0) list.push(fn);
    H.listeners.push({ type: String(type), target: this });
    void options;
  };
  EventTarget.prototype.removeEventListener = function (type, fn) {
    var list = this._listeners && this._listeners[type];
    if (!list) return;
    var i = list.indexOf(fn);
    if (i >= 0) list.splice(i, 1);
  };
  function invoke(target, event) {
    var list = target._listeners && target._listeners[event.type];
    var handler = target['on' + event.type];
    var all = (list ? list.slice() : []);
    if (typeof handler === 'function') all.push(handler);
    for (var i = 0; i < all.length; i++) {
      event.currentTarget = target;
      try {
        var fn = all[i];
        if (typeof fn === 'function') fn.call(target, event); else fn.handleEvent(event);
      } catch (e) {
        H.error('event ' + event.type, e);
      }
      if (event._stopNow) break;
    }
  }
  EventTarget.prototype.dispatchEvent = function (event) {
    if (!event || typeof event.type !== 'string') throw new TypeError('dispatchEvent needs an Event');
    if (event instanceof CustomEvent || event.detail !== undefined) {
      H.customEvents[event.type] = (H.customEvents[event.type] || 0) + 1;
    }
    event.target = this;
    var node = this;
    while (node) {
      invoke(node, event);
      if (!event.bubbles || event._stop) break;
      node = node.parentNode || (node === document ? window : null);
    }
    return !event.defaultPrevented;
  };

  // ---------------------------------------------------------------- DOM
  function ClassList(el) { this.el = el; }
  ClassList.prototype._get = function () { return (this.el.className || '').split(/\s+/).filter(Boolean); };
  ClassList.prototype._set = function (xs) { this.el.className = xs.join(' '); };
  ClassList.prototype.add = function () { var xs = this._get(); for (var i = 0; i < arguments.length; i++) if (xs.indexOf(arguments[i]) < 0) xs.push(arguments[i]); this._set(xs); };
  ClassList.prototype.remove = function () { var a = Array.prototype.slice.call(arguments); this._set(this._get().filter(function (c) { return a.indexOf(c) < 0; })); };
  ClassList.prototype.contains = function (c) { return this._get().indexOf(c) >= 0; };
  ClassList.prototype.toggle = function (c, force) {
    var has = this.contains(c);
    var want = force === undefined ? !has : !!force;
    if (want && !has) this.add(c);
    if (!want && has) this.remove(c);
    return want;
  };

  function Element(tag) {
    EventTarget.call(this);
    this.tagName = String(tag).toUpperCase();
    this.nodeName = this.tagName;
    this.nodeType = 1;
    this.children = [];
    this.childNodes = this.children;
    this.parentNode = null;
    this.parentElement = null;
    this.attributes = {};
    this.style = {};
    this.dataset = {};
    this.className = '';
    this.id = '';
    this._text = '';
    this.classList = new ClassList(this);
    this.hidden = false;
    this.disabled = false;
    this.value = '';
  }
  Element.prototype = Object.create(EventTarget.prototype);
  Element.prototype.constructor = Element;
  Object.defineProperty(Element.prototype, 'textContent', {
    get: function () { return this._text + this.children.map(function (c) { return c.textContent; }).join(''); },
    set: function (v) { this._text = String(v); this.children.length = 0; },
  });
  Object.defineProperty(Element.prototype, 'innerText', {
    get: function () { return this.textContent; },
    set: function (v) { this.textContent = v; },
  });
  Object.defineProperty(Element.prototype, 'innerHTML', {
    get: function () { return this._html || this._text; },
    set: function (v) { this._html = String(v); this._text = String(v).replace(/<[^>]*>/g, ''); this.children.length = 0; },
  });
  Object.defineProperty(Element.prototype, 'firstChild', { get: function () { return this.children[0] || null; } });
  Object.defineProperty(Element.prototype, 'firstElementChild', { get: function () { return this.children[0] || null; } });
  Object.defineProperty(Element.prototype, 'lastChild', { get: function () { return this.children[this.children.length - 1] || null; } });
  Element.prototype.setAttribute = function (name, value) {
    name = String(name).toLowerCase();
    value = String(value);
    this.attributes[name] = value;
    if (name === 'id') this.id = value;
    else if (name === 'class') this.className = value;
    else if (name.indexOf('data-') === 0) {
      this.dataset[name.slice(5).replace(/-([a-z])/g, function (_, c) { return c.toUpperCase(); })] = value;
    } else if (name === 'width' || name === 'height') this[name] = Number(value) || 0;
  };
  Element.prototype.getAttribute = function (name) {
    name = String(name).toLowerCase();
    if (name === 'id') return this.id || null;
    if (name === 'class') return this.className || null;
    if (name.indexOf('data-') === 0) {
      var key = name.slice(5).replace(/-([a-z])/g, function (_, c) { return c.toUpperCase(); });
      return key in this.dataset ? String(this.dataset[key]) : null;
    }
    return name in this.attributes ? this.attributes[name] : null;
  };
  Element.prototype.hasAttribute = function (name) { return this.getAttribute(name) !== null; };
  Element.prototype.removeAttribute = function (name) { delete this.attributes[String(name).toLowerCase()]; };
  Element.prototype.toggleAttribute = function (name, force) {
    var want = force === undefined ? !this.hasAttribute(name) : !!force;
    if (want) this.setAttribute(name, ''); else this.removeAttribute(name);
    return want;
  };
  Element.prototype.appendChild = function (child) {
    if (child && child.parentNode) child.parentNode.removeChild(child);
    if (child) { child.parentNode = this; child.parentElement = this; this.children.push(child); }
    return child;
  };
  Element.prototype.append = function () { for (var i = 0; i < arguments.length; i++) { var c = arguments[i]; if (c instanceof Element) this.appendChild(c); else this._text += String(c); } };
  Element.prototype.prepend = function (c) { if (c instanceof Element) { this.appendChild(c); this.children.unshift(this.children.pop()); } };
  Element.prototype.insertBefore = function (c) { return this.appendChild(c); };
  Element.prototype.replaceChildren = function () { this.children.length = 0; this._text = ''; this.append.apply(this, arguments); };
  Element.prototype.removeChild = function (child) {
    var i = this.children.indexOf(child);
    if (i >= 0) { this.children.splice(i, 1); child.parentNode = null; child.parentElement = null; }
    return child;
  };
  Element.prototype.remove = function () { if (this.parentNode) this.parentNode.removeChild(this); };
  Element.prototype.contains = function (other) {
    for (var n = other; n; n = n.parentNode) if (n === this) return true;
    return false;
  };
  Element.prototype.getBoundingClientRect = function () {
    var w = this.width || 0, h = this.height || 0;
    return { left: 0, top: 0, x: 0, y: 0, right: w, bottom: h, width: w, height: h };
  };
  Element.prototype.focus = function () { document.activeElement = this; };
  Element.prototype.blur = function () { document.activeElement = document.body; };
  Element.prototype.click = function () { this.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true })); };
  Element.prototype.setPointerCapture = function () {};
  Element.prototype.releasePointerCapture = function () {};
  Element.prototype.requestPointerLock = function () {};
  Element.prototype.scrollIntoView = function () {};
  Element.prototype.animate = function () { return { finished: Promise.resolve(), cancel: function () {} }; };

  // Selectors: compounds of tag, #id, .class and [attr] / [attr=value], joined by descendant
  // spaces or `>`; selector lists with commas.
  function parseCompound(text) {
    var c = { tag: null, id: null, classes: [], attrs: [] };
    var re = /([#.]?)([A-Za-z0-9_-]+|\*)|\[\s*([A-Za-z0-9_-]+)\s*(?:([~|^$*]?=)\s*["']?([^"'\]]*)["']?\s*)?\]/g;
    var m;
    while ((m = re.exec(text))) {
      if (m[3]) c.attrs.push({ name: m[3].toLowerCase(), op: m[4] || null, value: m[5] });
      else if (m[1] === '#') c.id = m[2];
      else if (m[1] === '.') c.classes.push(m[2]);
      else if (m[2] !== '*') c.tag = m[2].toUpperCase();
    }
    return c;
  }
  function matchCompound(el, c) {
    if (!el || el.nodeType !== 1) return false;
    if (c.tag && el.tagName !== c.tag) return false;
    if (c.id && el.id !== c.id) return false;
    for (var i = 0; i < c.classes.length; i++) if (!el.classList.contains(c.classes[i])) return false;
    for (var j = 0; j < c.attrs.length; j++) {
      var a = c.attrs[j], v = el.getAttribute(a.name);
      if (v === null) return false;
      if (a.op === '=' && v !== a.value) return false;
      if (a.op === '^=' && v.indexOf(a.value) !== 0) return false;
      if (a.op === '*=' && v.indexOf(a.value) < 0) return false;
    }
    return true;
  }
  function matches(el, selector) {
    return String(selector).split(',').some(function (one) {
      var parts = one.trim().replace(/\s*>\s*/g, ' ').split(/\s+/).filter(Boolean).map(parseCompound);
      if (!parts.length || !matchCompound(el, parts[parts.length - 1])) return false;
      var node = el.parentNode;
      for (var i = parts.length - 2; i >= 0; i--) {
        while (node && !matchCompound(node, parts[i])) node = node.parentNode;
        if (!node) return false;
        node = node.parentNode;
      }
      return true;
    });
  }
  function walk(root, out) {
    for (var i = 0; i < root.children.length; i++) { out.push(root.children[i]); walk(root.children[i], out); }
    return out;
  }
  Element.prototype.matches = function (s) { return matches(this, s); };
  Element.prototype.closest = function (s) {
    for (var n = this; n && n.nodeType === 1; n = n.parentNode) if (matches(n, s)) return n;
    return null;
  };
  Element.prototype.querySelectorAll = function (s) { return walk(this, []).filter(function (e) { return matches(e, s); }); };
  Element.prototype.querySelector = function (s) { return this.querySelectorAll(s)[0] || null; };
  Element.prototype.getElementsByClassName = function (c) { return walk(this, []).filter(function (e) { return e.classList.contains(c); }); };
  Element.prototype.getElementsByTagName = function (t) { t = String(t).toUpperCase(); return walk(this, []).filter(function (e) { return t === '*' || e.tagName === t; }); };

  // ---------------------------------------------------------------- canvas 2D
  function Gradient() {}
  Gradient.prototype.addColorStop = function () {};
  function styleKey(v) { return typeof v === 'string' ? v.trim().toLowerCase() : '[object]'; }
  function Context2D(canvas) {
    this.canvas = canvas;
    this._fill = '#000000';
    this._stroke = '#000000';
    this.font = '10px sans-serif';
    this.lineWidth = 1;
    this.globalAlpha = 1;
    this.textAlign = 'start';
    this.textBaseline = 'alphabetic';
    this.shadowBlur = 0;
    this.shadowColor = 'transparent';
    this.globalCompositeOperation = 'source-over';
    this.lineCap = 'butt';
    this.lineJoin = 'miter';
    this.imageSmoothingEnabled = true;
    this._stack = [];
  }
  Object.defineProperty(Context2D.prototype, 'fillStyle', {
    get: function () { return this._fill; },
    set: function (v) { this._fill = v; H.canvas.styles[styleKey(v)] = (H.canvas.styles[styleKey(v)] || 0) + 1; },
  });
  Object.defineProperty(Context2D.prototype, 'strokeStyle', {
    get: function () { return this._stroke; },
    set: function (v) { this._stroke = v; H.canvas.styles[styleKey(v)] = (H.canvas.styles[styleKey(v)] || 0) + 1; },
  });
  function op() { H.canvas.ops++; }
  ['fillRect', 'strokeRect', 'clearRect', 'fill', 'stroke', 'drawImage', 'putImageData', 'strokeText'].forEach(function (name) {
    Context2D.prototype[name] = function () { op(); };
  });
  ['beginPath', 'closePath', 'moveTo', 'lineTo', 'rect', 'roundRect', 'ellipse', 'arcTo', 'quadraticCurveTo',
    'bezierCurveTo', 'clip', 'translate', 'rotate', 'scale', 'setTransform', 'resetTransform', 'transform',
    'setLineDash'].forEach(function (name) { Context2D.prototype[name] = function () {}; });
  Context2D.prototype.arc = function (x, y, r) {
    if (H.canvas.arcs.length < 64) H.canvas.arcs.push({ x: +x, y: +y, r: +r, style: styleKey(this._fill) });
  };
  Context2D.prototype.fillText = function (text) {
    op();
    if (H.canvas.texts.length < 64) H.canvas.texts.push(String(text));
  };
  Context2D.prototype.measureText = function (text) { return { width: String(text).length * 7, actualBoundingBoxAscent: 8, actualBoundingBoxDescent: 2 }; };
  Context2D.prototype.save = function () { this._stack.push([this._fill, this._stroke, this.globalAlpha, this.font, this.lineWidth]); };
  Context2D.prototype.restore = function () {
    var s = this._stack.pop();
    if (s) { this._fill = s[0]; this._stroke = s[1]; this.globalAlpha = s[2]; this.font = s[3]; this.lineWidth = s[4]; }
  };
  Context2D.prototype.createLinearGradient = function () { return new Gradient(); };
  Context2D.prototype.createRadialGradient = function () { return new Gradient(); };
  Context2D.prototype.createConicGradient = function () { return new Gradient(); };
  Context2D.prototype.createPattern = function () { return {}; };
  Context2D.prototype.getImageData = function (x, y, w, h) { return { width: w, height: h, data: new Uint8ClampedArray(Math.max(0, Math.min(w * h * 4, 1 << 20))) }; };
  Context2D.prototype.createImageData = function (w, h) { return this.getImageData(0, 0, w, h); };
  Context2D.prototype.getTransform = function () { return { a: 1, b: 0, c: 0, d: 1, e: 0, f: 0 }; };
  Context2D.prototype.isPointInPath = function () { return false; };

  function createElement(tag) {
    var el = new Element(tag);
    if (el.tagName === 'CANVAS') {
      el.width = 300;
      el.height = 150;
      el._ctx = null;
      el.getContext = function (kind) {
        if (kind !== '2d') return null;
        if (!this._ctx) this._ctx = new Context2D(this);
        return this._ctx;
      };
      el.toDataURL = function () { return 'data:,'; };
    }
    if (el.tagName === 'AUDIO') { el.play = function () { return Promise.resolve(); }; el.pause = function () {}; }
    return el;
  }

  // Builds the element tree from the artifact's HTML: tags, attributes and text; scripts and
  // styles are kept as elements without children.
  var VOID = { AREA: 1, BASE: 1, BR: 1, COL: 1, EMBED: 1, HR: 1, IMG: 1, INPUT: 1, LINK: 1, META: 1, SOURCE: 1, TRACK: 1, WBR: 1 };
  function buildDom(html) {
    var root = createElement('html');
    var head = null, body = null;
    var stack = [root];
    var re = /<!--[\s\S]*?-->|<(script|style)\b([^>]*)>[\s\S]*?<\/\1\s*>|<\/([A-Za-z][\w-]*)\s*>|<([A-Za-z][\w-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>|([^<]+)/gi;
    var m;
    var guard = 0;
    while ((m = re.exec(html)) && guard++ < 20000) {
      var top = stack[stack.length - 1];
      if (m[1]) {
        var special = createElement(m[1]);
        setAttributes(special, m[2] || '');
        top.appendChild(special);
      } else if (m[3]) {
        var closing = m[3].toUpperCase();
        for (var i = stack.length - 1; i > 0; i--) {
          if (stack[i].tagName === closing) { stack.length = i; break; }
        }
      } else if (m[4]) {
        var tag = m[4].toUpperCase();
        if (tag === 'HTML') { setAttributes(root, m[5] || ''); continue; }
        var el = createElement(tag);
        setAttributes(el, m[5] || '');
        top.appendChild(el);
        if (tag === 'HEAD') head = el;
        if (tag === 'BODY') body = el;
        if (!VOID[tag] && !/\/\s*$/.test(m[5] || '')) stack.push(el);
      } else if (m[6] && top !== root) {
        top._text += m[6].trim() ? m[6] : '';
      }
    }
    if (!head) { head = createElement('head'); root.children.unshift(head); head.parentNode = root; }
    if (!body) { body = createElement('body'); root.appendChild(body); }
    return { root: root, head: head, body: body };
  }
  function setAttributes(el, text) {
    var re = /([^\s=\/]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?/g;
    var m;
    while ((m = re.exec(text))) {
      var v = m[2] === undefined ? '' : m[2].replace(/^["']|["']$/g, '');
      el.setAttribute(m[1], v);
    }
  }

  // ---------------------------------------------------------------- document and window
  var document = new EventTarget();
  var window = globalThis;
  H.configure = function (options) {
    options = options || {};
    H.frameMs = options.frame_ms || H.frameMs;
    H.storageMode = options.storage || 'normal';
    H.html = options.html || '';
    var preset = options.storage_preset || {};
    for (var key in preset) H.storage[key] = String(preset[key]);
    var dom = buildDom(H.html);
    document.documentElement = dom.root;
    document.head = dom.head;
    document.body = dom.body;
    document.activeElement = dom.body;
    dom.root.parentNode = document;
    H.globalsBefore = Object.getOwnPropertyNames(globalThis);
  };
  document.nodeType = 9;
  document.readyState = 'loading';
  document.hidden = false;
  document.visibilityState = 'visible';
  document.title = '';
  document.cookie = '';
  document.createElement = createElement;
  document.createElementNS = function (_, tag) { return createElement(tag); };
  document.createTextNode = function (t) { var e = createElement('#text'); e._text = String(t); return e; };
  document.createDocumentFragment = function () { return createElement('#fragment'); };
  document.getElementById = function (id) {
    var all = walk(document.documentElement, []);
    for (var i = 0; i < all.length; i++) if (all[i].id === String(id)) return all[i];
    return null;
  };
  document.querySelector = function (s) { return document.documentElement.querySelector(s) || (matches(document.documentElement, s) ? document.documentElement : null); };
  document.querySelectorAll = function (s) { return document.documentElement.querySelectorAll(s); };
  document.getElementsByClassName = function (c) { return document.documentElement.getElementsByClassName(c); };
  document.getElementsByTagName = function (t) { return document.documentElement.getElementsByTagName(t); };
  document.hasFocus = function () { return true; };
  document.exitPointerLock = function () {};

  window.window = window;
  window.self = window;
  window.document = document;
  window.top = window;
  window.parent = window;
  window.innerWidth = 1280;
  window.innerHeight = 800;
  window.devicePixelRatio = 1;
  window._listeners = {};
  ['addEventListener', 'removeEventListener', 'dispatchEvent'].forEach(function (name) {
    window[name] = EventTarget.prototype[name];
  });
  window.Event = Event;
  window.CustomEvent = CustomEvent;
  window.KeyboardEvent = KeyboardEvent;
  window.MouseEvent = MouseEvent;
  window.PointerEvent = MouseEvent;
  window.EventTarget = EventTarget;
  window.HTMLElement = Element;
  window.Element = Element;
  window.HTMLCanvasElement = Element;
  window.CanvasRenderingContext2D = Context2D;
  window.location = { href: 'file:///index.html', protocol: 'file:', host: '', hostname: '', pathname: '/index.html', search: '', hash: '', reload: function () {} };
  window.navigator = { userAgent: 'coherence-headless', language: 'en', languages: ['en'], maxTouchPoints: 0, vibrate: function () { return false; } };
  window.screen = { width: 1280, height: 800 };
  window.history = { pushState: function () {}, replaceState: function () {} };
  window.matchMedia = function () { return { matches: false, addEventListener: function () {}, removeEventListener: function () {}, addListener: function () {} }; };
  window.getComputedStyle = function (el) { return el && el.style ? el.style : {}; };
  window.alert = function () {};
  window.confirm = function () { return false; };
  window.prompt = function () { return null; };
  window.focus = function () {};
  window.scrollTo = function () {};
  window.open = function () { return null; };
  window.fetch = function () { return Promise.reject(new TypeError('fetch is disabled in the sandbox')); };
  window.XMLHttpRequest = function () { throw new TypeError('XMLHttpRequest is disabled in the sandbox'); };
  window.WebSocket = function () { throw new TypeError('WebSocket is disabled in the sandbox'); };
  window.Image = function () { var e = createElement('img'); e.complete = true; return e; };
  window.ResizeObserver = function () { return { observe: function () {}, unobserve: function () {}, disconnect: function () {} }; };
  window.console = { log: function () {}, info: function () {}, warn: function () {}, error: function () {}, debug: function () {}, table: function () {}, assert: function () {}, group: function () {}, groupEnd: function () {} };

  // ---------------------------------------------------------------- clock, timers, frames
  var epoch = 1700000000000;
  var RealDate = Date;
  function VirtualDate() {
    if (!(this instanceof VirtualDate)) return new RealDate(epoch + H.now).toString();
    var args = Array.prototype.slice.call(arguments);
    return args.length ? new (Function.prototype.bind.apply(RealDate, [null].concat(args)))() : new RealDate(epoch + H.now);
  }
  VirtualDate.now = function () { return epoch + Math.floor(H.now); };
  VirtualDate.UTC = RealDate.UTC;
  VirtualDate.parse = RealDate.parse;
  VirtualDate.prototype = RealDate.prototype;
  window.Date = VirtualDate;
  window.performance = { now: function () { return H.now; }, mark: function () {}, measure: function () {} };
  window.requestAnimationFrame = function (fn) { H.rafId++; H.raf.push({ id: H.rafId, fn: fn }); return H.rafId; };
  window.cancelAnimationFrame = function (id) { H.raf = H.raf.filter(function (r) { return r.id !== id; }); };
  function addTimer(fn, ms, repeat, args) {
    H.timerId++;
    var delay = Math.max(0, Number(ms) || 0);
    H.timers.push({ id: H.timerId, fn: fn, at: H.now + delay, every: repeat ? Math.max(delay, 1) : 0, args: args });
    return H.timerId;
  }
  window.setTimeout = function (fn, ms) { return addTimer(fn, ms, false, Array.prototype.slice.call(arguments, 2)); };
  window.setInterval = function (fn, ms) { return addTimer(fn, ms, true, Array.prototype.slice.call(arguments, 2)); };
  window.clearTimeout = window.clearInterval = function (id) { H.timers = H.timers.filter(function (t) { return t.id !== id; }); };
  window.queueMicrotask = function (fn) { Promise.resolve().then(fn); };

  function runTimers(until) {
    for (var guard = 0; guard < 1000; guard++) {
      var next = null;
      for (var i = 0; i < H.timers.length; i++) {
        if (H.timers[i].at <= until && (!next || H.timers[i].at < next.at)) next = H.timers[i];
      }
      if (!next) return;
      if (next.every) next.at += next.every; else H.timers.splice(H.timers.indexOf(next), 1);
      try {
        if (typeof next.fn === 'function') next.fn.apply(window, next.args); else H.error('timer', 'string timers are not run');
      } catch (e) {
        H.error('timer', e);
      }
    }
  }
  // One display frame: the clock moves by `ms` (default: the scenario's frame length), due
  // timers fire, then the animation frame callbacks requested before this frame run.
  H.tick = function (ms) {
    var step = ms === undefined ? H.frameMs : ms;
    var until = H.now + step;
    runTimers(until);
    H.now = until;
    H.frame++;
    var before = H.canvas.ops;
    var due = H.raf;
    H.raf = [];
    for (var i = 0; i < due.length; i++) {
      try {
        due[i].fn(H.now);
      } catch (e) {
        H.error('animation frame', e);
      }
    }
    H.canvas.lastFrameOps = H.canvas.ops - before;
    if (H.canvas.frameOps.length < 4000) H.canvas.frameOps.push(H.canvas.lastFrameOps);
  };
  H.fireLoad = function () {
    document.readyState = 'interactive';
    document.dispatchEvent(new Event('DOMContentLoaded'));
    document.readyState = 'complete';
    window.dispatchEvent(new Event('load'));
  };

  // ---------------------------------------------------------------- input
  var KEYS = {
    ArrowLeft: ['ArrowLeft', 37], ArrowRight: ['ArrowRight', 39], ArrowUp: ['ArrowUp', 38], ArrowDown: ['ArrowDown', 40],
    Space: [' ', 32], Enter: ['Enter', 13], Escape: ['Escape', 27], KeyP: ['p', 80], KeyM: ['m', 77], KeyA: ['a', 65],
    KeyD: ['d', 68], KeyR: ['r', 82],
  };
  H.key = function (type, code) {
    var k = KEYS[code] || [code, 0];
    var init = { bubbles: true, cancelable: true, code: code, key: k[0], keyCode: k[1], which: k[1], repeat: false };
    var target = document.activeElement || document.body;
    target.dispatchEvent(new KeyboardEvent(type, init));
  };
  H.press = function (code) { H.key('keydown', code); H.key('keyup', code); };
  H.click = function (el) { if (el) el.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, button: 0 })); };

  // ---------------------------------------------------------------- storage
  var storage = {
    getItem: function (k) { k = String(k); return Object.prototype.hasOwnProperty.call(H.storage, k) ? H.storage[k] : null; },
    setItem: function (k, v) {
      if (H.storageMode === 'private') {
        H.storageThrows++;
        var e = new Error('QuotaExceededError: The quota has been exceeded.');
        e.name = 'QuotaExceededError';
        e.code = 22;
        throw e;
      }
      H.storage[String(k)] = String(v);
      if (H.storageWrites.length < 100) H.storageWrites.push({ key: String(k), value: String(v) });
    },
    removeItem: function (k) { delete H.storage[String(k)]; },
    clear: function () { H.storage = {}; },
    key: function (i) { return Object.keys(H.storage)[i] || null; },
  };
  Object.defineProperty(storage, 'length', { get: function () { return Object.keys(H.storage).length; } });
  window.localStorage = storage;
  window.sessionStorage = storage;

  // ---------------------------------------------------------------- Web Audio
  function AudioParam(v) { this.value = v; }
  ['setValueAtTime', 'linearRampToValueAtTime', 'exponentialRampToValueAtTime', 'setTargetAtTime', 'cancelScheduledValues', 'setValueCurveAtTime'].forEach(function (name) {
    AudioParam.prototype[name] = function (v) { if (name === 'setValueAtTime') this.value = v; return this; };
  });
  function AudioNode(ctx) { H.audio.nodes++; this.context = ctx; }
  AudioNode.prototype.connect = function (dest) { return dest; };
  AudioNode.prototype.disconnect = function () {};
  function AudioContext() {
    H.audio.contexts++;
    if (H.audio.createdAtFrame < 0) H.audio.createdAtFrame = H.frame;
    this.state = H.userGesture ? 'running' : 'suspended';
    this.sampleRate = 44100;
    this.destination = new AudioNode(this);
  }
  Object.defineProperty(AudioContext.prototype, 'currentTime', { get: function () { return H.now / 1000; } });
  AudioContext.prototype.resume = function () { this.state = 'running'; return Promise.resolve(); };
  AudioContext.prototype.suspend = function () { this.state = 'suspended'; return Promise.resolve(); };
  AudioContext.prototype.close = function () { this.state = 'closed'; return Promise.resolve(); };
  function source(ctx) {
    var n = new AudioNode(ctx);
    n.start = function () { H.audio.started++; };
    n.stop = function () {};
    n.onended = null;
    return n;
  }
  AudioContext.prototype.createOscillator = function () {
    var n = source(this);
    n.type = 'sine';
    n.frequency = new AudioParam(440);
    n.detune = new AudioParam(0);
    return n;
  };
  AudioContext.prototype.createBufferSource = function () { var n = source(this); n.buffer = null; n.playbackRate = new AudioParam(1); n.loop = false; return n; };
  AudioContext.prototype.createGain = function () { var n = new AudioNode(this); n.gain = new AudioParam(1); return n; };
  AudioContext.prototype.createBiquadFilter = function () { var n = new AudioNode(this); n.type = 'lowpass'; n.frequency = new AudioParam(350); n.Q = new AudioParam(1); n.gain = new AudioParam(0); return n; };
  AudioContext.prototype.createStereoPanner = function () { var n = new AudioNode(this); n.pan = new AudioParam(0); return n; };
  AudioContext.prototype.createDynamicsCompressor = function () { var n = new AudioNode(this); n.threshold = new AudioParam(-24); return n; };
  AudioContext.prototype.createDelay = function () { var n = new AudioNode(this); n.delayTime = new AudioParam(0); return n; };
  AudioContext.prototype.createBuffer = function (channels, length, rate) {
    var size = Math.max(0, Math.min(Number(length) || 0, 1 << 18));
    return { numberOfChannels: channels, length: size, sampleRate: rate, duration: size / (rate || 44100), getChannelData: function () { return new Float32Array(size); } };
  };
  window.AudioContext = AudioContext;
  window.webkitAudioContext = AudioContext;
  var gestureKeys = { keydown: 1, click: 1, pointerdown: 1, mousedown: 1, touchstart: 1 };
  var dispatch = EventTarget.prototype.dispatchEvent;
  EventTarget.prototype.dispatchEvent = function (event) {
    if (event && gestureKeys[event.type] && !(event instanceof CustomEvent)) H.userGesture = true;
    return dispatch.call(this, event);
  };
  window.dispatchEvent = EventTarget.prototype.dispatchEvent;

  // ---------------------------------------------------------------- report helpers
  H.newGlobals = function () {
    var before = {};
    (H.globalsBefore || []).forEach(function (k) { before[k] = 1; });
    return Object.getOwnPropertyNames(globalThis).filter(function (k) {
      return !before[k] && k.indexOf('__') !== 0;
    });
  };
  H.listenerCount = function (type, target) {
    return H.listeners.filter(function (l) { return l.type === type && (!target || l.target === target); }).length;
  };
})();
