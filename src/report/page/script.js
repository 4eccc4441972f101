// report.html's only script: sortable tables and the divergence filters. The page is complete
// without it; nothing here fetches anything.
(function () {
  "use strict";
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };

  function sortKey(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null) { v = cell.textContent.trim(); }
    var n = Number(v);
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }

  function sortBy(table, column, th) {
    var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
    each(th.parentNode.cells, function (c) { c.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", dir);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = sortKey(a.cells[column]), y = sortKey(b.cells[column]);
      var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
      return dir === "ascending" ? c : -c;
    });
    each(rows, function (r) { body.appendChild(r); });
  }

  each(document.querySelectorAll("table.sortable"), function (table) {
    each(table.tHead.rows[0].cells, function (th, i) {
      th.tabIndex = 0;
      th.setAttribute("aria-sort", "none");
      th.title = "Sort by this column";
      var go = function () { sortBy(table, i, th); };
      th.addEventListener("click", go);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); }
      });
    });
  });

  each(document.querySelectorAll(".filters"), function (bar) {
    var table = document.getElementById(bar.getAttribute("data-table"));
    if (!table) { return; }
    var controls = bar.querySelectorAll("select, input");
    var count = bar.querySelector(".count");
    var rows = table.tBodies[0].rows;
    function apply() {
      var shown = 0;
      each(rows, function (row) {
        var ok = true;
        each(controls, function (c) {
          var want = c.value.trim();
          if (!ok || want === "") { return; }
          var key = c.getAttribute("data-key");
          if (key === "text") {
            ok = row.textContent.toLowerCase().indexOf(want.toLowerCase()) >= 0;
          } else {
            ok = (row.getAttribute("data-" + key) || "").split(" ").indexOf(want) >= 0;
          }
        });
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      count.textContent = shown + " of " + rows.length + " shown";
    }
    each(controls, function (c) {
      c.addEventListener("input", apply);
      c.addEventListener("change", apply);
    });
    bar.hidden = false;
    apply();
  });

  // A link to a prompt opens its details.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
