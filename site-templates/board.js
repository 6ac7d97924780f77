// Board filters by milestone, person, priority and label, read from the search index
// (search-index.js). Without script the board shows every card and this does nothing.
(function () {
  "use strict";
  var ix = window.commiteaIndex;
  var form = document.getElementById("filters");
  if (!ix || !form) return;
  var byKey = {};
  ix.issues.forEach(function (e) {
    byKey[ix.repos[e[0]] + "#" + e[1]] = e;
  });
  function fill(select, names) {
    names.forEach(function (name, i) {
      var o = document.createElement("option");
      o.value = String(i);
      o.textContent = name;
      select.appendChild(o);
    });
  }
  fill(form.elements.milestone, ix.milestones.map(function (m) { return m[1]; }));
  fill(form.elements.person, ix.people);
  fill(form.elements.label, ix.labels);
  function matches(e, f) {
    if (!e) return true;
    if (f.milestone !== "" && String(e[4]) !== f.milestone) return false;
    if (f.person !== "" && String(e[5]) !== f.person) return false;
    // No priority label means p/2.
    if (f.priority !== "" && String(e[6] < 0 ? 2 : e[6]) !== f.priority) return false;
    if (f.label !== "" && e[7].indexOf(Number(f.label)) < 0) return false;
    return true;
  }
  function apply() {
    var f = {
      milestone: form.elements.milestone.value,
      person: form.elements.person.value,
      priority: form.elements.priority.value,
      label: form.elements.label.value
    };
    var any = f.milestone || f.person || f.priority || f.label;
    document.querySelectorAll(".column").forEach(function (col) {
      var shown = 0;
      var cards = col.querySelectorAll("li.issue");
      cards.forEach(function (li) {
        var ok = matches(byKey[li.getAttribute("data-key")], f);
        li.hidden = !ok;
        if (ok) shown += 1;
      });
      var out = col.querySelector(".filtered");
      if (out) out.textContent = any ? "filtered: " + shown + " of " + cards.length + " cards" : "";
    });
  }
  form.addEventListener("change", apply);
  form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
  form.hidden = false;
})();
