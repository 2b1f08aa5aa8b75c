// The replay viewer: steps through the positions the server rebuilt with the rules engine.
//
// A finished match embeds its whole replay (script#replay-data). A pending or running match
// embeds only where its stream is (script#live-data, `live.events`): the viewer follows
// GET /api/v1/matches/{id}/events, draws each `step` frame with the same code that draws a
// stored step, and reloads the page for the final replay at `end` (docs/STREAMS.md).
// Autoplay with a speed control, the running score of each deal, deep links (#g1-d3-s12) that
// scroll to the board, and a per-seat view of a finished match (what that bot was sent, its
// raw answer, its latency, its fault: GET /api/v1/matches/{id}/replay?seat=a|b).
// Text goes in through textContent, never innerHTML, so nothing in the data can become markup.
(function () {
  "use strict";

  var source = document.getElementById("replay-data") || document.getElementById("live-data");
  if (!source) return;
  var data = JSON.parse(source.textContent);
  var deals = data.deals || [];
  var live = data.live || null;
  if (!deals.length && !live) return;

  var SUITS = { c: ["\u2663", "black"], d: ["\u2666", "red"], h: ["\u2665", "red"], s: ["\u2660", "black"] };
  var OUTCOMES = { knock: "Knock", undercut: "Undercut", gin: "Gin", big_gin: "Big gin", dead: "Dead hand", tie: "Tie" };
  var VIEWS = ["", "a", "b"];
  var deal = 0;
  var step = 0;
  var view = "";          // "": both hands; "a" or "b": only that seat's cards
  var seatData = {};      // seat -> {state: "loading" | "ready" | "failed", byDeal, error}
  var playing = false;
  var timer = null;
  var ended = false;      // live: the stream said `end`
  var logKey = null;      // what the action log was last built for
  var optionsKey = null;  // what the deal menu was last built for
  var waiting = "Waiting for the first deal\u2026";

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

  function backEl() {
    var node = el("span", "card back", "\u00a0");
    node.setAttribute("aria-hidden", "true");
    return node;
  }

  function said(text) {
    var suit = SUITS[text && text.charAt(1)];
    if (!suit) return text;
    return (text.charAt(0) === "T" ? "10" : text.charAt(0)) + suit[0];
  }

  function cardRow(cards, extraFor) {
    var row = el("span", "cards");
    (cards || []).forEach(function (c) { row.appendChild(cardEl(c, extraFor ? extraFor(c) : "")); });
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

  function anchor(d, i) { return "g" + (d.game + 1) + "-d" + (d.deal + 1) + "-s" + i; }

  function atNewest() {
    return deals.length > 0 && deal === deals.length - 1 && step === deals[deal].steps.length - 1;
  }

  // --- what a view may show ----------------------------------------------------------------

  // A hand as the current view shows it: {cards: {melds, deadwood, dw}} when its faces show,
  // else {count, known}: the live public stream sends counts, and a seat view hides the other.
  function shownHand(s, seat) {
    var hand = (s.hands && s.hands[seat]) || { count: 0 };
    var known = (s.known && s.known[seat]) || [];
    if (!hand.melds) return { count: hand.count || 0, known: known };
    var count = hand.deadwood.length;
    hand.melds.forEach(function (meld) { count += meld.length; });
    if (view && view !== seat) return { count: count, known: known };
    return { cards: hand, count: count, known: known };
  }

  function actionText(a) {
    var text = a.text;
    // In a seat's view the other bot's card from the stock stays face down, as it did for it.
    if (view && a.seat && a.seat !== view && a.kind === "draw_stock") text = "draws from the stock";
    return (a.seat ? nameOf(a.seat) + " " : "") + text;
  }

  // --- drawing -----------------------------------------------------------------------------

  function drawSeat(seat, d, s) {
    var box = $("seat-" + seat);
    box.textContent = "";
    var hand = shownHand(s, seat);
    var known = {};
    hand.known.forEach(function (c) { known[c] = true; });
    var joined = s.action && s.action.seat === seat ? s.joined : null;
    var head = el("div", "seat-head");
    head.appendChild(el("strong", "seat-name", nameOf(seat)));
    if (data.versions && data.versions[seat]) head.appendChild(el("span", "seat-version muted", data.versions[seat]));
    if (d.dealer === seat) head.appendChild(el("span", "tag", "dealer"));
    if (s.to_act === seat) head.appendChild(el("span", "tag to-act", "to act"));
    if (view === seat) head.appendChild(el("span", "tag", "this view"));
    if (s.exposed && s.exposed[seat]) head.appendChild(el("span", "tag misknock", "hand exposed"));
    head.appendChild(el("span", "seat-info", hand.count + " cards" + (hand.cards ? " \u00b7 deadwood " + hand.cards.dw : "")));
    box.appendChild(head);
    var cards = el("div", "hand");
    cards.setAttribute("data-count", String(hand.count));
    if (hand.cards) {
      var mark = function (c) {
        var classes = [];
        if (c === joined) classes.push("new");
        if (known[c]) classes.push("known");
        return classes.join(" ");
      };
      hand.cards.melds.forEach(function (meld) {
        var group = cardRow(meld, mark);
        group.className = "cards meld";
        group.title = "meld";
        cards.appendChild(group);
      });
      if (hand.cards.deadwood.length) {
        var dead = cardRow(hand.cards.deadwood, mark);
        dead.className = "cards deadwood";
        dead.title = "deadwood";
        cards.appendChild(dead);
      }
    } else {
      var backs = el("span", "cards concealed");
      backs.title = hand.count + " cards, face down";
      for (var i = 0; i < hand.count; i++) backs.appendChild(backEl());
      cards.appendChild(backs);
    }
    box.appendChild(cards);
    if (!hand.cards && hand.known.length) {
      box.appendChild(el("p", "known-text", "Known to hold (taken from the discard pile): " + hand.known.map(said).join(" ")));
    }
    box.classList.toggle("acting", s.to_act === seat);
  }

  function drawCutShort(box) {
    var f = data.forfeit;
    var who = f && f.seat ? nameOf(f.seat) : "both bots";
    box.appendChild(el("p", "showdown-title fault", "The match ended here: forfeit by " + who +
      (f && f.reason ? " (" + f.reason + ")" : "") + "."));
  }

  function meldGroups(box, melds, extraFor) {
    (melds || []).forEach(function (m) {
      var group = cardRow(m.cards || m);
      group.className = "cards meld";
      if (extraFor) extraFor(m, group);
      box.appendChild(group);
    });
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
      meldGroups(melds, result.knocker_melds, function (m, group) {
        (m.layoffs || []).forEach(function (c) { group.appendChild(cardEl(c, "layoff")); });
      });
      if ((result.knocker_deadwood_cards || []).length) {
        var kd = cardRow(result.knocker_deadwood_cards);
        kd.className = "cards deadwood";
        melds.appendChild(kd);
      }
      k.appendChild(melds);
      box.appendChild(k);
      var laid = [];
      (result.knocker_melds || []).forEach(function (m) { laid = laid.concat(m.layoffs || []); });
      var df = el("div", "showdown-side");
      df.appendChild(el("p", "", nameOf(defender) + ": deadwood " + result.defender_deadwood +
        (laid.length ? " after laying off " + laid.map(said).join(" ") : "")));
      var dm = el("div", "hand");
      meldGroups(dm, result.defender_melds);
      if ((result.defender_deadwood_cards || []).length) {
        var dd = cardRow(result.defender_deadwood_cards);
        dd.className = "cards deadwood";
        dm.appendChild(dd);
      }
      df.appendChild(dm);
      box.appendChild(df);
    }
    (result.misknocks || []).forEach(function (mk) {
      box.appendChild(el("p", "warn", "Misknock by " + nameOf(mk.seat) + (mk.card ? " with " + said(mk.card) : "") + ": " + mk.deadwood + " deadwood"));
    });
    ["a", "b"].forEach(function (seat) {
      if (result.penalties && result.penalties[seat]) {
        box.appendChild(el("p", "warn", nameOf(seat) + " receives " + result.penalties[seat] + " misknock penalty points"));
      }
    });
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

  // The running score: the deal's game points and the games won, before it and (at its last
  // step, once it is over) after it.
  function drawScore(d, atEnd) {
    var box = $("deal-score");
    box.textContent = "";
    if (!d || !d.score) { box.hidden = true; return; }
    box.hidden = false;
    var after = atEnd && d.after;
    var now = after || { score: d.score, games: d.games };
    box.appendChild(el("span", "muted", "Game " + (d.game + 1) + ", deal " + (d.deal + 1) + (after ? ", after the deal: " : ", before the deal: ")));
    box.appendChild(el("strong", "", data.names.a + " " + now.score.a + " \u2013 " + now.score.b + " " + data.names.b));
    if (now.games) box.appendChild(el("span", "muted", " \u00b7 games " + now.games.a + "\u2013" + now.games.b));
  }

  function fmtAction(a) {
    if (!a) return "";
    return a.action + (a.card ? " " + a.card : "");
  }

  function seatStep(seat, d, i) {
    // The k-th action of `seat` in a deal is its k-th step of that deal in the seat replay.
    var list = seatData[seat].byDeal[d.game + "-" + d.deal] || [];
    var k = 0;
    for (var j = 1; j < i; j++) if (d.steps[j].action.seat === seat) k++;
    return list[k] || null;
  }

  function kv(list, label, value) {
    var row = el("div");
    row.appendChild(el("dt", "", label));
    var dd = el("dd");
    if (typeof value === "string") dd.textContent = value; else dd.appendChild(value);
    row.appendChild(dd);
    list.appendChild(row);
  }

  function drawSeatView(d, s, i) {
    var box = $("seat-view");
    if (!box) return;
    box.textContent = "";
    if (!view) { box.hidden = true; return; }
    box.hidden = false;
    var who = nameOf(view);
    var sd = seatData[view];
    if (!sd || sd.state === "loading") { box.appendChild(el("p", "muted", "Loading what " + who + " was sent\u2026")); return; }
    if (sd.state === "failed") { box.appendChild(el("p", "fault", "Could not load the view of " + who + ": " + sd.error)); return; }
    var a = s.action;
    if (!a.seat) { box.appendChild(el("p", "muted", "The deal: " + who + " has been sent nothing yet in this deal.")); return; }
    if (a.seat !== view) { box.appendChild(el("p", "muted", nameOf(a.seat) + " acted: " + who + " was sent nothing for this step.")); return; }
    var x = seatStep(view, d, i);
    if (!x) { box.appendChild(el("p", "muted", "No request of " + who + " is recorded for this step.")); return; }
    var r = x.request || {};
    box.appendChild(el("h3", "", "What " + who + " was sent and answered"));
    var list = el("dl", "kv");
    kv(list, "Phase", String(r.phase));
    var hand = cardRow(r.hand);
    hand.className = "cards sent-hand";
    kv(list, "Its hand", hand);
    kv(list, "Discard top", r.discard_top ? said(r.discard_top) : "none");
    kv(list, "Stock", String(r.stock_count));
    kv(list, "Legal actions", (r.legal_actions || []).map(fmtAction).join(", "));
    var raw = x.answer_raw === null || x.answer_raw === undefined ? "no answer" :
      (x.answer_raw_encoding === "base64" ? "(base64) " : "") + x.answer_raw;
    kv(list, "Raw answer", el("pre", "raw-answer", raw));
    kv(list, "Latency", ms(x.latency_ms));
    kv(list, "Fault", x.fault ? x.fault.kind + (x.fault.detail ? " (" + x.fault.detail + ")" : "") : "none");
    kv(list, "Played", fmtAction(x.applied));
    box.appendChild(list);
    var more = el("details", "request-json");
    more.appendChild(el("summary", "", "The whole request (JSON)"));
    more.appendChild(el("pre", "", JSON.stringify(r, null, 2)));
    box.appendChild(more);
  }

  function optionText(d) {
    var r = d.result;
    var text = "Game " + (d.game + 1) + (d.unfinished ? " (unfinished)" : "") + " \u00b7 deal " + (d.deal + 1);
    if (r) {
      text += " \u2014 " + (OUTCOMES[r.outcome] || r.outcome);
      if (r.winner) text += ", " + data.names[r.winner] + " +" + r.points;
    } else if (d.error) {
      text += " \u2014 does not replay";
    } else if (d.interrupted) {
      text += " \u2014 cut short by the forfeit";
    } else if (d.live) {
      text += " \u2014 being played";
    }
    return text;
  }

  // The deal menu of a live match grows as deals start (a finished one's is the server's).
  function buildOptions() {
    if (!live) return;
    var texts = deals.map(optionText);
    var key = texts.join("\n");
    if (key === optionsKey) return;
    optionsKey = key;
    var select = $("deal-select");
    select.textContent = "";
    texts.forEach(function (text, i) {
      var option = el("option", "", text);
      option.value = String(i);
      select.appendChild(option);
    });
  }

  function buildLog(d) {
    var key = deal + ":" + d.steps.length + ":" + view + ":" + (d.result ? 1 : 0);
    if (key === logKey) return;
    logKey = key;
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

  function setButtons(atFirst, atLast) {
    $("btn-first").disabled = $("btn-prev").disabled = atFirst;
    $("btn-last").disabled = $("btn-next").disabled = atLast;
    var jump = $("btn-live");
    if (jump) jump.hidden = ended || !deals.length || atNewest();
  }

  function renderEmpty() {
    ["a", "b"].forEach(function (seat) {
      var box = $("seat-" + seat);
      box.textContent = "";
      var head = el("div", "seat-head");
      head.appendChild(el("strong", "seat-name", nameOf(seat)));
      box.appendChild(head);
      box.classList.remove("acting");
    });
    $("stock-count").textContent = "\u2014";
    $("discard-top").textContent = "";
    $("pile-size").textContent = "";
    $("phase").textContent = "";
    $("action").textContent = "";
    $("action").appendChild(el("span", "action-text", waiting));
    $("step-counter").textContent = "0 / 0";
    $("log").textContent = "";
    $("showdown").hidden = true;
    $("deal-score").hidden = true;
    $("replay-error").hidden = true;
    if ($("seat-view")) $("seat-view").hidden = true;
    logKey = null;
    buildOptions();
    setButtons(true, true);
  }

  function render() {
    if (!deals.length) { renderEmpty(); return; }
    buildOptions();
    var d = deals[deal];
    buildLog(d);
    var s = d.steps[step];
    var last = d.steps.length - 1;
    $("deal-select").value = String(deal);
    $("step-counter").textContent = step + " / " + last;
    setButtons(step <= 0, step >= last);
    var error = $("replay-error");
    error.hidden = !d.error;
    error.textContent = d.error || "";
    if (!s) return;
    drawSeat("a", d, s);
    drawSeat("b", d, s);
    $("stock-count").textContent = String(s.stock);
    var top = $("discard-top");
    top.textContent = "";
    top.appendChild(s.top ? cardEl(s.top) : (s.pile ? backEl() : el("span", "card empty", "empty")));
    $("pile-size").textContent = s.pile + (s.pile === 1 ? " card" : " cards");
    $("phase").textContent = (s.to_act ? s.phase + " \u00b7 " + nameOf(s.to_act) + " to act" : "deal over") +
      (d.limit !== null && d.limit !== undefined ? " \u00b7 knock at " + d.limit + " or less" : "");
    drawAction(s);
    drawScore(d, step === last && !!d.result);
    drawSeatView(d, s, step);
    drawShowdown(s.showdown || (step === last ? d.result : null), d, step === last);
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
    if (!deals.length) { render(); return; }
    deal = Math.max(0, Math.min(deals.length - 1, newDeal));
    var last = deals[deal].steps.length - 1;
    step = Math.max(0, Math.min(last, newStep));
    render();
  }

  function goNewest() {
    if (!deals.length) { render(); return; }
    go(deals.length - 1, deals[deals.length - 1].steps.length - 1);
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

  // --- autoplay ----------------------------------------------------------------------------

  function schedule() {
    clearTimeout(timer);
    if (!playing) return;
    var wait = +$("speed").value || 800;
    var d = deals[deal];
    if (d && step === d.steps.length - 1) wait *= 2.5;  // a moment to read the showdown
    timer = setTimeout(tick, wait);
  }

  function tick() {
    var d = deals[deal];
    if (d && step < d.steps.length - 1) go(deal, step + 1);
    else if (d && deal < deals.length - 1) go(deal + 1, 0);
    else if (!live || ended) { setPlaying(false); return; }
    schedule();
  }

  function setPlaying(on) {
    playing = on;
    var button = $("btn-play");
    button.textContent = on ? "Pause" : "Play";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    if (on && !live && deals.length && deal === deals.length - 1 && step === deals[deal].steps.length - 1) go(0, 0);
    if (on) schedule(); else clearTimeout(timer);
  }

  function changeSpeed(by) {
    var select = $("speed");
    select.selectedIndex = Math.max(0, Math.min(select.options.length - 1, select.selectedIndex + by));
    schedule();
  }

  // --- the seat view -----------------------------------------------------------------------

  function loadSeat(seat) {
    seatData[seat] = { state: "loading" };
    fetch(data.seats[seat], { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(body.detail || body.title || "HTTP " + response.status);
          return body;
        });
      })
      .then(function (body) {
        var byDeal = {};
        (body.steps || []).forEach(function (x) {
          var key = x.game + "-" + x.deal;
          (byDeal[key] = byDeal[key] || []).push(x);
        });
        seatData[seat] = { state: "ready", byDeal: byDeal };
      }, function (error) {
        seatData[seat] = { state: "failed", error: error.message };
      })
      .then(function () { if (view === seat) render(); });
  }

  function setView(value) {
    if (!data.seats || VIEWS.indexOf(value) < 0) return;
    view = value;
    $("view-select").value = value;
    if (view && !seatData[view]) loadSeat(view);
    render();
  }

  // --- the live stream ---------------------------------------------------------------------

  function setStatus(text) {
    var status = $("live-status");
    if (!status) return;
    status.hidden = false;
    var line = status.querySelector(".live-text");
    (line || status).textContent = text;
  }

  function findDeal(game, index) {
    for (var i = 0; i < deals.length; i++) if (deals[i].game === game && deals[i].deal === index) return i;
    return -1;
  }

  var SHOWDOWN_HOLD_MS = 2500;
  var scheduled = false;
  var follow = false;
  var hold = null;  // {until, at}: a finished deal's showdown stays this long before the next

  // Redraw once for a burst of events (a reconnection replays many); keep following the newest
  // step if the viewer was on it, letting a deal's showdown be read before the next deal.
  function changed(wasNewest) {
    follow = follow || wasNewest;
    if (scheduled) return;
    scheduled = true;
    setTimeout(flush, 0);
  }

  function flush() {
    scheduled = false;
    var here = deal + ":" + step;
    if (hold && hold.at !== here) { hold = null; follow = false; }  // the viewer moved away
    if (!follow) { go(deal, step); return; }
    var d = deals[deal];
    if (d && d.result && step === d.steps.length - 1 && deal < deals.length - 1) {
      if (!hold) hold = { until: Date.now() + SHOWDOWN_HOLD_MS, at: here };
      var left = hold.until - Date.now();
      if (left > 0) {
        go(deal, step);
        scheduled = true;
        setTimeout(flush, left);
        return;
      }
    }
    hold = null;
    follow = false;
    goNewest();
  }

  function onStep(ev) {
    var wasNewest = !deals.length || atNewest();
    var i = findDeal(ev.game, ev.deal);
    if (i < 0) {
      deals.push({ game: ev.game, deal: ev.deal, dealer: ev.dealer, limit: ev.limit, steps: [],
        result: null, error: null, live: true, score: ev.score, games: ev.games });
      i = deals.length - 1;
    }
    var d = deals[i];
    if (ev.dealer !== undefined) d.dealer = ev.dealer;
    if (ev.limit !== undefined) d.limit = ev.limit;
    d.steps[ev.index] = ev.step;
    changed(wasNewest);
  }

  function onDeal(ev) {
    var wasNewest = atNewest();
    var i = findDeal(ev.game, ev.deal);
    var old = i < 0 ? null : deals[i];
    var d = {};
    Object.keys(ev).forEach(function (key) { d[key] = ev[key]; });
    d.after = { score: ev.score, games: ev.games };
    d.score = old ? old.score : null;
    d.games = old ? old.games : null;
    if (i < 0) deals.push(d); else deals[i] = d;
    changed(wasNewest);
  }

  function finish() {
    setPlaying(false);
    // The page the server renders now has the whole replay (and the games table): load it, on
    // the same position (the address holds it). Once: a second `end` within seconds means the
    // page is still rendered live, so say so instead of reloading again.
    var key = "gin-arena-reloaded:" + window.location.pathname;
    var last = 0;
    try { last = +(window.sessionStorage.getItem(key) || 0); } catch (e) { last = 0; }
    if (Date.now() - last < 10000) {
      setStatus("The match is over: reload the page for its replay.");
      return;
    }
    try { window.sessionStorage.setItem(key, String(Date.now())); } catch (e) { /* private mode */ }
    setStatus("The match is over: loading its replay\u2026");
    window.location.reload();
  }

  function connect() {
    if (!window.EventSource) {
      setStatus("This browser cannot follow the match live: reload the page to see how it goes.");
      return;
    }
    var stream = new EventSource(live.events);
    var on = function (name, handler) {
      stream.addEventListener(name, function (e) { handler(JSON.parse(e.data)); });
    };
    stream.onopen = function () { setStatus("Live: following the match as it is played."); };
    stream.onerror = function () {
      if (stream.readyState === EventSource.CLOSED) setStatus("Live updates stopped: reload the page to follow the match.");
      else if (!ended) setStatus("Live: reconnecting\u2026");
    };
    on("match", function (m) {
      if (m.names) ["a", "b"].forEach(function (seat) { if (m.names[seat]) data.names[seat] = m.names[seat]; });
      var badge = document.querySelector(".match-title .badge");
      if (badge && m.status) {
        badge.className = "badge status-" + m.status;
        badge.textContent = m.status;
      }
      var banner = $("result-banner");
      if (banner && m.status === "running") {
        banner.textContent = "";
        banner.appendChild(el("p", "", "Being played now (attempt " + m.attempt + ")."));
      }
    });
    on("waiting", function () { waiting = "Waiting for a worker to play this match\u2026"; changed(false); });
    on("step", onStep);
    on("deal", onDeal);
    on("reset", function (r) {
      deals = [];
      deal = step = 0;
      hold = null;
      logKey = optionsKey = null;
      waiting = "The match restarted (attempt " + r.attempt + "): waiting for its first deal\u2026";
      changed(true);
    });
    on("replay", function (r) {
      deals = r.deals || [];
      if (r.names) data.names = r.names;
      data.forfeit = r.forfeit;
      hold = null;
      logKey = optionsKey = null;
      changed(true);
    });
    on("end", function () {
      ended = true;
      stream.close();
      finish();
    });
  }

  // --- wiring ------------------------------------------------------------------------------

  $("btn-first").addEventListener("click", function () { go(deal, 0); });
  $("btn-prev").addEventListener("click", function () { go(deal, step - 1); });
  $("btn-next").addEventListener("click", function () { go(deal, step + 1); });
  $("btn-last").addEventListener("click", function () { go(deal, deals[deal] ? deals[deal].steps.length - 1 : 0); });
  $("btn-play").addEventListener("click", function () { setPlaying(!playing); });
  $("speed").addEventListener("change", schedule);
  $("deal-select").addEventListener("change", function (e) { go(+e.target.value, 0); });
  if ($("btn-live")) $("btn-live").addEventListener("click", goNewest);
  if ($("view-select")) $("view-select").addEventListener("change", function (e) { setView(e.target.value); });
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
    if (e.key === " " && (tag === "BUTTON" || tag === "SUMMARY" || tag === "A")) return;  // their own click
    var last = function () { return deals[deal] ? deals[deal].steps.length - 1 : 0; };
    var moves = {
      ArrowRight: function () { go(deal, step + 1); },
      ArrowLeft: function () { go(deal, step - 1); },
      Home: function () { go(deal, 0); },
      End: function () { go(deal, last()); },
      PageDown: function () { go(deal + 1, 0); },
      PageUp: function () { go(deal - 1, 0); },
      " ": function () { setPlaying(!playing); },
      "+": function () { changeSpeed(1); },
      "=": function () { changeSpeed(1); },
      "-": function () { changeSpeed(-1); },
      v: function () { setView(VIEWS[(VIEWS.indexOf(view) + 1) % VIEWS.length]); },
      V: function () { setView(VIEWS[(VIEWS.indexOf(view) + 1) % VIEWS.length]); }
    };
    if (moves[e.key]) {
      e.preventDefault();
      moves[e.key]();
    }
  });

  window.addEventListener("hashchange", function () {
    if (fromHash()) $("replay").scrollIntoView({ block: "start" });
  });

  if (live) {
    render();
    connect();
  } else if (fromHash()) {
    $("replay").scrollIntoView({ block: "start" });  // a deep link: show its board
  } else {
    go(0, 0);
  }
})();
