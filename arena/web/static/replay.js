// The replay viewer: steps through the positions the server rebuilt with the rules engine.
// All data is embedded in the page (script#replay-data); this file only draws it. Text goes
// in through textContent, never innerHTML, so nothing in the data can become markup.
(function () {
  "use strict";

  var source = document.getElementById("replay-data");
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var deals = data.deals || [];
  if (!deals.length) return;

  var SUITS = { c: ["\u2663", "black"], d: ["\u2666", "red"], h: ["\u2665", "red"], s: ["\u2660", "black"] };
  var OUTCOMES = { knock: "Knock", undercut: "Undercut", gin: "Gin", big_gin: "Big gin", dead: "Dead hand", tie: "Tie" };
  var deal = 0;
  var step = 0;

  function $(id) { return document.getElementById(id); }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function cardEl(text, extra) {
    var suit = SUITS[text && text.charAt(1)];
    if (!suit) return el("span", "card empty", "\u2014");
    var rank = text.charAt(0) === "T" ? "10" : text.charAt(0);
    var node = el("span", "card " + suit[1] + (extra ? " " + extra : ""), rank);
    node.appendChild(el("span", "suit", suit[0]));
    node.title = text;
    node.setAttribute("data-card", text);
    return node;
  }

  function said(text) {
    var suit = SUITS[text && text.charAt(1)];
    if (!suit) return text;
    return (text.charAt(0) === "T" ? "10" : text.charAt(0)) + suit[0];
  }

  function cardRow(cards, extraFor) {
    var row = el("span", "cards");
    cards.forEach(function (c) { row.appendChild(cardEl(c, extraFor ? extraFor(c) : "")); });
    return row;
  }

  function ms(value) {
    if (value === null || value === undefined) return "";
    if (value >= 1000) return (value / 1000).toFixed(2) + " s";
    if (value >= 100) return value.toFixed(0) + " ms";
    if (value >= 10) return value.toFixed(1) + " ms";
    return value.toFixed(2) + " ms";
  }

  function nameOf(seat) { return data.names[seat] + " (" + seat + ")"; }

  function drawSeat(seat, d, s) {
    var box = $("seat-" + seat);
    box.textContent = "";
    var hand = s.hands[seat];
    var known = {};
    ((s.known && s.known[seat]) || []).forEach(function (c) { known[c] = true; });
    var joined = s.action && s.action.seat === seat ? s.joined : null;
    var head = el("div", "seat-head");
    head.appendChild(el("strong", "seat-name", nameOf(seat)));
    if (data.versions && data.versions[seat]) head.appendChild(el("span", "seat-version muted", data.versions[seat]));
    if (d.dealer === seat) head.appendChild(el("span", "tag", "dealer"));
    if (s.to_act === seat) head.appendChild(el("span", "tag to-act", "to act"));
    if (s.exposed && s.exposed[seat]) head.appendChild(el("span", "tag misknock", "hand exposed"));
    var count = hand.deadwood.length;
    hand.melds.forEach(function (meld) { count += meld.length; });
    head.appendChild(el("span", "seat-info", count + " cards \u00b7 deadwood " + hand.dw));
    box.appendChild(head);
    var cards = el("div", "hand");
    cards.setAttribute("data-count", String(count));
    function mark(c) {
      var classes = [];
      if (c === joined) classes.push("new");
      if (known[c]) classes.push("known");
      return classes.join(" ");
    }
    hand.melds.forEach(function (meld) {
      var group = cardRow(meld, mark);
      group.className = "cards meld";
      group.title = "meld";
      cards.appendChild(group);
    });
    if (hand.deadwood.length) {
      var dead = cardRow(hand.deadwood, mark);
      dead.className = "cards deadwood";
      dead.title = "deadwood";
      cards.appendChild(dead);
    }
    box.appendChild(cards);
    box.classList.toggle("acting", s.to_act === seat);
  }

  function drawCutShort(box) {
    var f = data.forfeit;
    var who = f && f.seat ? nameOf(f.seat) : "both bots";
    box.appendChild(el("p", "showdown-title fault", "The match ended here: forfeit by " + who +
      (f && f.reason ? " (" + f.reason + ")" : "") + "."));
  }

  function drawShowdown(result, d, atEnd) {
    var box = $("showdown");
    box.textContent = "";
    if (atEnd && d.interrupted) {
      box.hidden = false;
      drawCutShort(box);
      return;
    }
    if (!atEnd || !result) { box.hidden = true; return; }
    box.hidden = false;
    var title = OUTCOMES[result.outcome] || result.outcome;
    var line = el("p", "showdown-title");
    line.appendChild(el("strong", "", title));
    if (result.winner) {
      line.appendChild(document.createTextNode(": " + nameOf(result.winner) + " scores " + result.points));
      if (result.multiplier > 1) line.appendChild(document.createTextNode(" (\u00d7" + result.multiplier + ")"));
    } else {
      line.appendChild(document.createTextNode(": no score"));
    }
    box.appendChild(line);
    if (result.knocker) {
      var defender = result.knocker === "a" ? "b" : "a";
      var k = el("div", "showdown-side");
      k.appendChild(el("p", "", nameOf(result.knocker) + " knocked: deadwood " + result.knocker_deadwood));
      var melds = el("div", "hand");
      result.knocker_melds.forEach(function (m) {
        var group = cardRow(m.cards);
        group.className = "cards meld";
        m.layoffs.forEach(function (c) { group.appendChild(cardEl(c, "layoff")); });
        melds.appendChild(group);
      });
      if (result.knocker_deadwood_cards.length) {
        var kd = cardRow(result.knocker_deadwood_cards);
        kd.className = "cards deadwood";
        melds.appendChild(kd);
      }
      k.appendChild(melds);
      box.appendChild(k);
      var laid = [];
      result.knocker_melds.forEach(function (m) { laid = laid.concat(m.layoffs); });
      var df = el("div", "showdown-side");
      df.appendChild(el("p", "", nameOf(defender) + ": deadwood " + result.defender_deadwood +
        (laid.length ? " after laying off " + laid.map(said).join(" ") : "")));
      var dm = el("div", "hand");
      result.defender_melds.forEach(function (m) {
        var group = cardRow(m);
        group.className = "cards meld";
        dm.appendChild(group);
      });
      if (result.defender_deadwood_cards.length) {
        var dd = cardRow(result.defender_deadwood_cards);
        dd.className = "cards deadwood";
        dm.appendChild(dd);
      }
      df.appendChild(dm);
      box.appendChild(df);
    }
    (result.misknocks || []).forEach(function (mk) {
      box.appendChild(el("p", "warn", "Misknock by " + nameOf(mk.seat) + " with " + said(mk.card) + ": " + mk.deadwood + " deadwood"));
    });
    ["a", "b"].forEach(function (seat) {
      if (result.penalties && result.penalties[seat]) {
        box.appendChild(el("p", "warn", nameOf(seat) + " receives " + result.penalties[seat] + " misknock penalty points"));
      }
    });
  }

  function actionText(a) {
    return (a.seat ? nameOf(a.seat) + " " : "") + a.text;
  }

  function drawAction(s) {
    var box = $("action");
    box.textContent = "";
    var a = s.action;
    box.appendChild(el("span", "action-text", actionText(a)));
    if (a.latency !== undefined && a.latency !== null) box.appendChild(el("span", "latency", ms(a.latency)));
    if (a.fault) {
      box.appendChild(el("p", "fault", "Fault: " + a.fault.kind + (a.fault.detail ? " (" + a.fault.detail + ")" : "") +
        "; fallback applied: " + a.fault.fallback));
    }
    if (a.misknock) {
      box.appendChild(el("p", "warn", "Misknock: " + a.misknock.deadwood + " deadwood, the limit is " + a.misknock.limit));
    }
  }

  function buildLog(d) {
    var log = $("log");
    log.textContent = "";
    d.steps.forEach(function (s, i) {
      var item = el("li", s.action.fault ? "faulted" : (s.action.misknock ? "misknocked" : ""));
      var link = el("a", "", actionText(s.action));
      link.href = "#" + anchor(d, i);
      item.appendChild(link);
      if (s.action.latency !== undefined && s.action.latency !== null) item.appendChild(el("span", "latency", ms(s.action.latency)));
      if (s.action.fault) item.appendChild(el("span", "tag fault", s.action.fault.kind));
      log.appendChild(item);
    });
  }

  function anchor(d, i) { return "g" + (d.game + 1) + "-d" + (d.deal + 1) + "-s" + i; }

  function render() {
    var d = deals[deal];
    var s = d.steps[step];
    var last = d.steps.length - 1;
    $("deal-select").value = String(deal);
    $("step-counter").textContent = step + " / " + last;
    $("btn-first").disabled = $("btn-prev").disabled = step <= 0;
    $("btn-last").disabled = $("btn-next").disabled = step >= last;
    var error = $("replay-error");
    error.hidden = !d.error;
    error.textContent = d.error || "";
    if (!s) return;
    drawSeat("a", d, s);
    drawSeat("b", d, s);
    $("stock-count").textContent = String(s.stock);
    var top = $("discard-top");
    top.textContent = "";
    top.appendChild(s.top ? cardEl(s.top) : el("span", "card empty", "empty"));
    $("pile-size").textContent = s.pile + (s.pile === 1 ? " card" : " cards");
    $("phase").textContent = (s.to_act ? s.phase + " \u00b7 " + nameOf(s.to_act) + " to act" : "deal over") +
      " \u00b7 knock at " + d.limit + " or less";
    drawAction(s);
    drawShowdown(s.showdown, d, step === last);
    var items = $("log").children;
    for (var i = 0; i < items.length; i++) items[i].classList.toggle("current", i === step);
    scrollLog(items[step]);
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + anchor(d, step));
    }
  }

  // Keep the current action in view inside the log's own scroll box (never the page's).
  function scrollLog(item) {
    var box = $("log-wrap");
    if (!item || !box) return;
    var top = item.offsetTop;  // .log-wrap is positioned: offsets are relative to it
    if (top < box.scrollTop || top + item.offsetHeight > box.scrollTop + box.clientHeight) {
      box.scrollTop = Math.max(0, top - box.clientHeight / 2);
    }
  }

  function go(newDeal, newStep) {
    newDeal = Math.max(0, Math.min(deals.length - 1, newDeal));
    if (newDeal !== deal || !$("log").children.length) {
      deal = newDeal;
      buildLog(deals[deal]);
    }
    var last = deals[deal].steps.length - 1;
    step = Math.max(0, Math.min(last, newStep));
    render();
  }

  function fromHash() {
    var m = /^#g(\d+)-d(\d+)-s(\d+)$/.exec(window.location.hash);
    if (!m) return false;
    for (var i = 0; i < deals.length; i++) {
      if (deals[i].game + 1 === +m[1] && deals[i].deal + 1 === +m[2]) {
        go(i, +m[3]);
        return true;
      }
    }
    return false;
  }

  $("btn-first").addEventListener("click", function () { go(deal, 0); });
  $("btn-prev").addEventListener("click", function () { go(deal, step - 1); });
  $("btn-next").addEventListener("click", function () { go(deal, step + 1); });
  $("btn-last").addEventListener("click", function () { go(deal, deals[deal].steps.length - 1); });
  $("deal-select").addEventListener("change", function (e) { go(+e.target.value, 0); });
  $("log").addEventListener("click", function (e) {
    var link = e.target.closest ? e.target.closest("a") : null;
    if (!link) return;
    e.preventDefault();
    var index = Array.prototype.indexOf.call($("log").children, link.parentNode);
    if (index >= 0) go(deal, index);
  });

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var moves = {
      ArrowRight: function () { go(deal, step + 1); },
      ArrowLeft: function () { go(deal, step - 1); },
      Home: function () { go(deal, 0); },
      End: function () { go(deal, deals[deal].steps.length - 1); },
      PageDown: function () { go(deal + 1, 0); },
      PageUp: function () { go(deal - 1, 0); }
    };
    if (moves[e.key]) {
      e.preventDefault();
      moves[e.key]();
    }
  });

  window.addEventListener("hashchange", function () {
    if (fromHash()) $("replay").scrollIntoView({ block: "start" });
  });

  if (!fromHash()) go(0, 0);
})();
