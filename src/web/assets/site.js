// Table sorting, as a progressive enhancement: every table reads fine without it.
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.querySelectorAll("thead th");
  heads.forEach(function (th, col) {
    var b = document.createElement("button");
    b.type = "button"; b.textContent = th.textContent; th.textContent = ""; th.appendChild(b);
    b.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var key = function (r) {
        var c = r.cells[col], v = c.getAttribute("data-value");
        return v === null ? c.textContent.trim().toLowerCase() : v === "" ? null : Number(v);
      };
      rows.sort(function (p, q) {
        var x = key(p), y = key(q);
        if (x === y) return 0; if (x === null) return 1; if (y === null) return -1;
        return (x < y ? -1 : 1) * (asc ? 1 : -1);
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
