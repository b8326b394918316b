// Labels of pairs, kept in this browser (localStorage) until downloaded as
// a pairs file. Text from the pages is only ever set as textContent, never
// parsed as HTML.
(function () {
  "use strict";
  var KEY = "simcrawl.labels";

  function load() {
    try {
      var v = JSON.parse(localStorage.getItem(KEY) || "{}");
      return v && typeof v === "object" ? v : {};
    } catch (e) {
      return {};
    }
  }
  function save(labels) {
    localStorage.setItem(KEY, JSON.stringify(labels));
  }
  function text(dup) {
    return dup ? "labelled duplicate" : "labelled not a duplicate";
  }

  function refresh() {
    var labels = load();
    var keys = Object.keys(labels);
    var count = document.getElementById("label-count");
    if (count) count.textContent = keys.length ? String(keys.length) : "";
    document.querySelectorAll(".label-state").forEach(function (el) {
      var l = labels[el.dataset.key];
      el.textContent = l ? text(l.duplicate) : "";
      el.className = "label-state" + (l ? (l.duplicate ? " dup" : " not") : "");
    });
    document.querySelectorAll("button.label").forEach(function (b) {
      var l = labels[b.dataset.key];
      b.classList.toggle("on", !!l && b.dataset.dup === String(l.duplicate));
    });
    var rows = document.getElementById("label-rows");
    if (rows) {
      rows.textContent = "";
      keys.sort().forEach(function (k) {
        var tr = document.createElement("tr");
        var a = document.createElement("a");
        var src = k.split(":");
        a.href = "/pair?src=" + encodeURIComponent(src[0]) + "&drop=" + encodeURIComponent(src[1]);
        a.textContent = labels[k].url || k;
        var td1 = document.createElement("td");
        td1.appendChild(a);
        var td2 = document.createElement("td");
        td2.textContent = labels[k].duplicate ? "duplicate" : "not a duplicate";
        tr.appendChild(td1);
        tr.appendChild(td2);
        rows.appendChild(tr);
      });
      var none = document.getElementById("no-labels");
      if (none) none.hidden = keys.length > 0;
      var dl = document.getElementById("download");
      if (dl) dl.disabled = keys.length === 0;
    }
    var field = document.getElementById("labels-field");
    if (field) {
      field.value = JSON.stringify(keys.map(function (k) {
        return { key: k, duplicate: labels[k].duplicate };
      }));
    }
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest("button.label, #forget");
    if (!b) return;
    var labels = load();
    if (b.id === "forget") {
      if (!window.confirm("Forget every label in this browser?")) return;
      labels = {};
    } else if (b.classList.contains("clear")) {
      delete labels[b.dataset.key];
    } else {
      labels[b.dataset.key] = { duplicate: b.dataset.dup === "true", url: b.dataset.url };
    }
    save(labels);
    refresh();
  });
  window.addEventListener("storage", refresh);
  document.addEventListener("DOMContentLoaded", refresh);
})();
