// The table layouts drawn in SVG: a Craps layout and a Props & Hops layout.
//
// Which one, and the numbers its boxes show, are the game's facts from the view (view.variant:
// layout, points, has_puck); no page compares a game's name.
//
// Each spot is a <g class="spot" data-code="..."> around its area; the page lights the spots the
// player may bet on now (the view's me.placeable) and draws the player's chips on them.

import { s, dieFace, chipText } from "./ui.js";

const NUMBER_WORDS = { 6: "SIX", 9: "NINE" };
const HOPS = [];
for (let a = 1; a <= 6; a++) for (let b = a; b <= 6; b++) HOPS.push([a, b]);

class Layout {
  constructor(width, height, facts) {
    this.key = layoutKey(facts);
    this.hasPuck = facts.has_puck;
    this.svg = s("svg", { class: "layout", viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": `${facts.title} layout` });
    this.spotsLayer = s("g", { class: "spots" });
    this.chipsLayer = s("g", { class: "chips" });
    this.puckLayer = s("g", { class: "puck-layer" });
    this.svg.append(this.spotsLayer, this.puckLayer, this.chipsLayer);
    this.spots = new Map();
    this.numberAnchors = {};   // n -> {come: [x, y], dontcome: [x, y], puck: [x, y]}
    this.boxChip = {};         // stack key -> chip radius inside a number box
    this.puckOff = null;
    this.paysAt = new Map();   // code -> {x, y, anchor, size, full, el}
  }

  /** Where a spot prints what it pays (the pack's paytable, from the view). */
  pays(code, x, y, { anchor = "middle", size = 10, full = false } = {}) {
    this.paysAt.set(code, { x, y, anchor, size, full, el: null });
  }

  drawPays(paytable) {
    for (const [code, at] of this.paysAt) {
      const spot = this.spots.get(code);
      const entry = paytable && paytable[code];
      if (!spot || !entry) continue;
      const text = at.full ? entry.pays : entry.felt;
      if (!at.el) {
        at.el = s("text", { x: at.x, y: at.y, class: "pays", "text-anchor": at.anchor, "dominant-baseline": "middle", style: `font-size:${at.size}px` });
        spot.g.insertBefore(at.el, spot.title);
      }
      if (at.el.textContent !== text) at.el.textContent = text;
      at.el.dataset.pays = entry.pays;
    }
  }

  /** A spot: ``shape`` is {x, y, w, h} or {d} (a path); ``chip`` is where its chips sit. */
  /** Whether this felt is the one ``facts`` (a view's variant) calls for. */
  fits(facts) {
    return this.key === layoutKey(facts);
  }

  spot(code, shape, chip, ...art) {
    const area = shape.d
      ? s("path", { class: "area", d: shape.d })
      : s("rect", { class: "area", x: shape.x, y: shape.y, width: shape.w, height: shape.h, rx: shape.r ?? 6 });
    const title = s("title", {}, code);
    const g = s("g", { class: "spot", dataset: { code }, tabindex: "0", role: "button", "aria-label": code }, area, ...art, title);
    this.spotsLayer.append(g);
    this.spots.set(code, { g, title, chip });
    return g;
  }

  text(x, y, content, cls = "label-small", extra = {}) {
    return s("text", { x, y, class: cls, "text-anchor": "middle", "dominant-baseline": "middle", ...extra }, content);
  }

  dicePair(a, b, cx, cy, size, cls = "") {
    const gap = size * 0.18;
    return s("g", {}, dieFace(a, cx - size - gap / 2, cy - size / 2, size, cls), dieFace(b, cx + gap / 2, cy - size / 2, size, cls));
  }

  /** Light the spots, set their titles (the amounts each takes), draw chips, stacks being
   * built, OFF markers, the placard and the puck. */
  draw(view, bets, { open, oddsOpen, ladders, builder = [], onChip = null }) {
    const lit = new Set(open || []);
    for (const [code, spot] of this.spots) {
      const lad = code === "odds" ? null : ladders[code];
      const offered = code === "odds" ? "odds" in view.limits : Boolean(lad);
      const isOpen = code === "odds" ? oddsOpen : lit.has(code);
      spot.g.classList.toggle("absent", !offered);
      spot.g.classList.toggle("open", offered && isOpen);
      spot.g.classList.toggle("shut", offered && !isOpen);
      spot.g.setAttribute("aria-disabled", String(!(offered && isOpen)));
      if (lad) {
        if (lad.ladder) {
          spot.g.dataset.min = lad.ladder.first;
          spot.g.dataset.max = lad.ladder.last;
        }
        const pays = view.paytable && view.paytable[code] ? ` — pays ${view.paytable[code].pays}` : "";
        spot.title.textContent = `${lad.label}${pays}${isOpen ? "" : " (closed now)"}`;
        spot.g.setAttribute("aria-label", `${lad.label}${pays}`);
      }
    }
    this.chipsLayer.replaceChildren();
    const where = new Map();  // bet id -> [x, y]
    const stacked = new Map();
    const place = (key, [x, y]) => {
      const n = stacked.get(key) || 0;
      stacked.set(key, n + 1);
      const r = this.boxChip[key] || 16;
      return [x + n * 10, y - n * 6, r];
    };
    const sorted = [...bets].sort((a, b) => (a.base ? 1 : 0) - (b.base ? 1 : 0));
    for (const bet of sorted) {
      const xy = this.chipAt(bet, bets, where, place);
      if (!xy) continue;
      where.set(bet.id, xy);
      const g = chip(xy[0], xy[1], bet.amount, bet, xy[2] || 16);
      if (onChip) {
        g.classList.add("clickable");
        g.addEventListener("click", (e) => { e.stopPropagation(); onChip(bet); });
      }
      this.chipsLayer.append(g);
    }
    // Stacks being built: a dashed chip showing the amount the stack comes to.
    for (const entry of builder) {
      let xy = null;
      if (entry.bet && where.has(entry.bet)) {
        const [x, y] = where.get(entry.bet);
        xy = [x + 14, y - 14];
      } else if (entry.base && where.has(entry.base)) {
        const baseBet = bets.find((b) => b.id === entry.base);
        xy = baseBet && (baseBet.wager === "pass" || baseBet.wager === "dontpass") && this.spots.has("odds")
          ? place("odds", this.spots.get("odds").chip) : [where.get(entry.base)[0] + 10, where.get(entry.base)[1] - 12];
      } else if (this.spots.has(entry.code)) {
        xy = place(entry.code, this.spots.get(entry.code).chip);
      }
      if (!xy) continue;
      this.chipsLayer.append(pendingChip(xy[0], xy[1], entry));
    }
    this.drawPays(view.paytable);
    this.drawPuck(view);
    this.drawPlacard(view.placard);
  }

  /** Where a bet's chips stand: come bets on their numbers, odds behind their bet. */
  chipAt(bet, bets, where, place) {
    if (bet.base) {
      const base = where.get(bet.base);
      const baseBet = bets.find((b) => b.id === bet.base);
      if (baseBet && (baseBet.wager === "pass" || baseBet.wager === "dontpass") && this.spots.has("odds")) {
        return place("odds", this.spots.get("odds").chip);
      }
      // Odds sit on top of their bet, offset so both amounts show (as a dealer heels them).
      if (!base) return null;
      const r = base[2] || 16;
      return r < 16 ? [base[0] + r, base[1] - 3, r] : [base[0] + 10, base[1] - 12, r];
    }
    if (bet.point && (bet.wager === "come" || bet.wager === "dontcome") && this.numberAnchors[bet.point]) {
      return place(`${bet.wager}${bet.point}`, this.numberAnchors[bet.point][bet.wager]);
    }
    return this.spots.has(bet.wager) ? place(bet.wager, this.spots.get(bet.wager).chip) : null;
  }

  drawPlacard(placard) {
    if (!placard || !this.placardAt) return;
    const [x, y, anchor, inline] = this.placardAt;
    if (inline) {
      this.chipsLayer.append(s("g", { class: "placard", id: "placard" },
        s("text", { x, y, class: "label-tiny gold", "text-anchor": anchor }, [placard.name, ...placard.lines].join(" · "))));
      return;
    }
    const g = s("g", { class: "placard", id: "placard" },
      s("text", { x, y, class: "label-small gold", "text-anchor": anchor, style: "font-weight:700" }, placard.name),
      ...placard.lines.map((line, i) => s("text", { x, y: y + 17 * (i + 1), class: "label-tiny", "text-anchor": anchor }, line)));
    this.chipsLayer.append(g);
  }

  drawPuck(view) {
    this.puckLayer.replaceChildren();
    if (!this.hasPuck) return;
    const on = view.point && this.numberAnchors[view.point];
    const [x, y] = on ? this.numberAnchors[view.point].puck : this.puckOff;
    this.puckLayer.append(s("g", { class: `puck ${on ? "on" : "off"}`, id: "layout-puck", dataset: { point: view.point || "" } },
      s("circle", { cx: x, cy: y + 2, r: on ? 13 : 16, fill: "rgba(0,0,0,.45)" }),
      s("circle", { class: "puck-face", cx: x, cy: y, r: on ? 13 : 16, fill: on ? "#fafafa" : "#151515" }),
      s("text", { x, y: y + 1, "text-anchor": "middle", "dominant-baseline": "middle" }, on ? "ON" : "OFF")));
  }
}

const fmt = (c) => `$${Math.floor(c / 100).toLocaleString("en-US")}.${String(c % 100).padStart(2, "0")}`;

function chipColour(cents) {
  if (cents >= 500_00) return ["#6a1b9a", false];
  if (cents >= 100_00) return ["#1d1d1d", false];
  if (cents >= 25_00) return ["#2e7d32", false];
  if (cents >= 5_00) return ["#c62828", false];
  return ["#f2f2f2", true];
}

function chip(x, y, cents, bet, r = 16) {
  const [fill, light] = chipColour(cents);
  const off = bet.working_now === false;
  const small = r < 16;
  return s("g", { class: `chip${off ? " is-off" : ""}${small ? " in-box" : ""}`, dataset: { bet: bet.id, wager: bet.wager, amount: cents, point: bet.point ?? "", off: String(off) } },
    s("circle", { cx: x, cy: y + 1.5, r, fill: "rgba(0,0,0,.45)" }),
    s("circle", { class: "outer", cx: x, cy: y, r, fill }),
    s("circle", { cx: x, cy: y, r: r * 0.7, fill, stroke: light ? "#888" : "rgba(255,255,255,.6)", "stroke-width": 1 }),
    s("text", { x, y: y + 1, "text-anchor": "middle", "dominant-baseline": "middle", class: light ? "dark" : "" }, chipText(cents)),
    off ? s("g", { class: "off-marker" },
      s("rect", { x: x - 14, y: y - 27, width: 28, height: 13, rx: 3 }),
      s("text", { x, y: y - 20, "text-anchor": "middle", "dominant-baseline": "middle" }, "OFF")) : null,
    s("title", {}, `${bet.label || bet.name}: ${fmt(cents)}${off ? " — OFF this roll" : ""}`));
}

function pendingChip(x, y, entry) {
  return s("g", { class: "chip pending", dataset: { key: entry.key, amount: entry.amount } },
    s("circle", { class: "outer", cx: x, cy: y, r: 16 }),
    s("text", { x, y: y + 1, "text-anchor": "middle", "dominant-baseline": "middle" }, chipText(entry.amount)),
    s("title", {}, `${entry.name}: ${fmt(entry.amount)} when you confirm`));
}

// -- Craps ---------------------------------------------------------------------------------------
export function crapsLayout(facts) {
  const L = new Layout(1200, 645, facts);
  const t = L.text.bind(L);

  // The number boxes (the game's points): lay, lose, place, buy, put, from the top of each
  // column; six columns fill the width as 105-wide boxes, more share it.
  const numbers = facts.points;
  const w = 630 / numbers.length;
  const k = w / 105;
  numbers.forEach((n, i) => {
    const x = 190 + i * w;
    const mid = x + w / 2;
    L.spot(`lay${n}`, { x, y: 20, w, h: 28, r: 0 }, [mid + 30 * k, 34], t(mid - 20 * k, 35, `LAY ${n}`, "label-tiny"));
    L.pays(`lay${n}`, mid + 24 * k, 35, { size: 9 });
    L.spot(`lose${n}`, { x, y: 48, w, h: 28, r: 0 }, [mid + 30 * k, 62], t(mid - 20 * k, 63, `LOSE ${n}`, "label-tiny"));
    L.pays(`lose${n}`, mid + 24 * k, 63, { size: 9 });
    // The box, as a dealer works it: come bets and their odds along the top, the puck at the
    // top right, the numeral in the middle, place bets on the place line at the bottom right;
    // no chip covers the numeral, PLACE or the price (chips in a box are drawn smaller).
    L.spot(`place${n}`, { x, y: 76, w, h: 86, r: 0 }, [mid + 36 * k, 147],
      t(mid, 118, NUMBER_WORDS[n] || String(n), n === 6 || n === 9 || k < 1 ? "label-mid" : "label-box"),
      t(mid, 146, "PLACE", "label-tiny"));
    L.pays(`place${n}`, mid - 8 * k, 157, { size: 10 });
    L.spot(`buy${n}`, { x, y: 162, w, h: 28, r: 0 }, [mid + 30 * k, 176], t(mid - 20 * k, 177, `BUY ${n}`, "label-tiny"));
    L.pays(`buy${n}`, mid + 24 * k, 177, { size: 9 });
    L.spot(`put${n}`, { x, y: 190, w, h: 30, r: 0 }, [mid + 30 * k, 205], t(mid - 20 * k, 206, `PUT ${n}`, "label-tiny"));
    L.pays(`put${n}`, mid + 24 * k, 206, { size: 9 });
    L.numberAnchors[n] = { come: [mid - 30 * k, 87], dontcome: [mid - 30 * k, 34], puck: [mid + 30 * k, 89] };
    L.boxChip[`place${n}`] = L.boxChip[`come${n}`] = Math.max(7, 11 * Math.min(1, k));
  });
  L.spot("dontcome", { x: 90, y: 20, w: 100, h: 200, r: 0 }, [140, 196],
    t(140, 88, "DON'T", "label-mid"), t(140, 114, "COME", "label-mid"), t(140, 138, "BAR", "label-small"),
    L.dicePair(6, 6, 140, 162, 18));
  L.pays("dontcome", 140, 211);
  L.puckOff = [140, 46];
  L.spot("come", { x: 90, y: 230, w: 730, h: 80 }, [700, 270], t(455, 266, "COME", "label-big red", { style: "font-size:52px;letter-spacing:.2em" }));
  L.pays("come", 455, 299, { size: 12 });
  L.spot("big6", { x: 90, y: 320, w: 100, h: 48, r: 0 }, [168, 344], t(130, 345, "BIG 6", "label-small red", { style: "font-weight:700;font-size:17px" }));
  L.spot("big8", { x: 90, y: 372, w: 100, h: 48, r: 0 }, [168, 396], t(130, 397, "BIG 8", "label-small red", { style: "font-weight:700;font-size:17px" }));
  L.pays("big6", 130, 361, { size: 9 });
  L.pays("big8", 130, 413, { size: 9 });
  L.spot("field", { x: 195, y: 320, w: 625, h: 100 }, [760, 370],
    t(507, 342, "2 · 3 · 4 · 9 · 10 · 11 · 12", "label-mid gold"),
    t(507, 379, "FIELD", "label-big", { style: "font-size:34px;letter-spacing:.3em" }));
  L.pays("field", 507, 408, { size: 12, full: true });
  L.spot("dontpass", { x: 90, y: 425, w: 730, h: 40 }, [760, 445],
    t(455, 446, "DON'T PASS BAR", "label-mid"), L.dicePair(6, 6, 640, 445, 18));
  L.pays("dontpass", 200, 446, { size: 12 });
  L.spot("pass", { d: "M20 20 H80 V470 H830 V530 H20 Z" }, [760, 500],
    t(455, 501, "PASS LINE", "label-big", { style: "font-size:36px;letter-spacing:.3em" }),
    t(50, 250, "PASS LINE", "label-mid", { transform: "rotate(-90 50 250)" }));
  L.pays("pass", 170, 501, { size: 12 });
  L.spot("odds", { x: 20, y: 538, w: 810, h: 34 }, [700, 555],
    t(425, 556, "ODDS — BEHIND THE LINE (TAKE OR LAY)", "label-small"));
  L.pays("odds", 150, 556, { size: 10 });
  const bonus = [["fire", "FIRE BET", "points made"], ["allsmall", "ALL SMALL", "2 · 3 · 4 · 5 · 6"],
    ["alltall", "ALL TALL", "8 · 9 · 10 · 11 · 12"], ["makeemall", "MAKE 'EM ALL", "all of them"]];
  bonus.forEach(([code, label, sub], i) => {
    const x = 20 + i * 204;
    L.spot(code, { x, y: 580, w: 198, h: 55 }, [x + 172, 607],
      t(x + 95, 595, label, "label-small gold", { style: "font-weight:700;font-size:15px" }), t(x + 95, 612, sub, "label-tiny"));
    L.pays(code, x + 95, 627, { size: 9 });
  });

  // The centre: propositions and hops.
  L.spot("any7", { x: 850, y: 20, w: 330, h: 36 }, [1150, 38], t(1015, 39, "SEVEN · ANY 7", "label-small red", { style: "font-weight:700;font-size:16px" }));
  L.pays("any7", 856, 39, { anchor: "start" });
  [["hard6", 3, 850, 60], ["hard10", 5, 1017, 60], ["hard8", 4, 850, 122], ["hard4", 2, 1017, 122]].forEach(([code, d, x, y]) => {
    L.spot(code, { x, y, w: 163, h: 58 }, [x + 140, y + 29], L.dicePair(d, d, x + 62, y + 24, 22, "red"),
      t(x + 62, y + 48, `HARD ${d * 2}`, "label-tiny"));
    L.pays(code, x + 112, y + 48);
  });
  [["two", 1, 1, "ACES"], ["three", 1, 2, "ACE-DEUCE"], ["twelve", 6, 6, "BOXCARS"], ["eleven", 5, 6, "YO 11"]].forEach(([code, a, b, label], i) => {
    const x = 850 + i * 83;
    L.spot(code, { x, y: 184, w: 80, h: 58 }, [x + 64, 228], L.dicePair(a, b, x + 40, 200, 18, "red"), t(x + 40, 223, label, "label-tiny"));
    L.pays(code, x + 40, 236, { size: 9 });
  });
  [["horn", "HORN"], ["world", "WORLD"], ["ce", "C & E"]].forEach(([code, label], i) => {
    const x = 850 + i * 111;
    L.spot(code, { x, y: 246, w: 108, h: 36 }, [x + 88, 264], t(x + 54, 257, label, "label-small", { style: "font-weight:700" }));
    L.pays(code, x + 54, 274, { size: 9 });
  });
  [2, 3, 11, 12].forEach((n, i) => {
    const x = 850 + i * 83;
    L.spot(`hornhigh${n}`, { x, y: 286, w: 80, h: 30 }, [x + 64, 301], t(x + 40, 295, `HORN HI ${n}`, "label-tiny"));
    L.pays(`hornhigh${n}`, x + 40, 308, { size: 8 });
  });
  L.spot("anycraps", { x: 850, y: 320, w: 330, h: 34 }, [1150, 337], t(1015, 338, "ANY CRAPS · 2 · 3 · 12", "label-small red", { style: "font-weight:700;font-size:15px" }));
  L.pays("anycraps", 856, 338, { anchor: "start" });
  L.spotsLayer.append(t(1015, 370, "HOPS", "label-small gold", { style: "font-weight:700;letter-spacing:.3em" }));
  HOPS.forEach(([a, b], i) => {
    const col = i % 7;
    const row = Math.floor(i / 7);
    const x = 850 + col * 47.2;
    const y = 382 + row * 64;
    L.spot(`hop${a}-${b}`, { x, y, w: 45, h: 60, r: 4 }, [x + 22, y + 44],
      dieFace(a, x + 12.5, y + 5, 20, a === b ? "red" : ""), dieFace(b, x + 12.5, y + 27, 20, a === b ? "red" : ""));
    L.pays(`hop${a}-${b}`, x + 22.5, y + 54, { size: 9 });
  });
  L.placardAt = [1180, 598, "end"];
  return L;
}


// -- Props & Hops ---------------------------------------------------------------------------------
export function propsLayout(facts) {
  const L = new Layout(1200, 500, facts);
  const t = L.text.bind(L);
  L.spotsLayer.append(t(600, 24, "PROPS & HOPS", "label-mid gold", { style: "letter-spacing:.4em" }));
  const words = { 2: "TWO", 4: "FOUR", 6: "SIX", 8: "EIGHT", 10: "TEN", 12: "TWELVE" };
  [2, 4, 6, 8, 10, 12].forEach((n, i) => {
    const x = 20 + i * 194;
    const d = n / 2;
    L.spot(`double${n}`, { x, y: 44, w: 188, h: 116 }, [x + 160, 132],
      L.dicePair(d, d, x + 94, 78, 32, "red"),
      t(x + 94, 120, `${words[n]} THE HARDWAY`, "label-small", { style: "font-weight:700" }),
      t(x + 94, 138, "DOUBLE WAGER", "label-tiny gold"));
    L.pays(`double${n}`, x + 94, 152, { size: 11 });
  });
  HOPS.filter(([a, b]) => a !== b).forEach(([a, b], i) => {
    const col = i % 5;
    const row = Math.floor(i / 5);
    const x = 20 + col * 138;
    const y = 172 + row * 68;
    L.spot(`hop${a}-${b}`, { x, y, w: 132, h: 62 }, [x + 108, y + 31],
      L.dicePair(a, b, x + 50, y + 26, 24), t(x + 50, y + 51, `HOP ${a}-${b} (${a + b})`, "label-tiny"));
    L.pays(`hop${a}-${b}`, x + 108, y + 10, { size: 10 });
  });
  [["any7", "ANY SEVEN", "red"], ["anydouble", "ANY DOUBLE", "gold"], ["anycraps", "ANY CRAPS · 2 · 3 · 12", "red"]].forEach(([code, label, cls], i) => {
    const y = 172 + i * 68;
    L.spot(code, { x: 720, y, w: 460, h: 62 }, [1150, y + 31], t(930, y + 26, label, `label-mid ${cls}`));
    L.pays(code, 930, y + 50, { size: 12 });
  });
  L.spot("field", { x: 20, y: 380, w: 1160, h: 100 }, [1140, 430],
    t(600, 405, "2 · 3 · 4 · 9 · 10 · 11 · 12", "label-mid gold"),
    t(600, 440, "FIELD", "label-big", { style: "font-size:34px;letter-spacing:.4em" }));
  L.pays("field", 600, 468, { size: 13, full: true });
  L.placardAt = [1180, 24, "end", true];
  return L;
}

/** The felt a game's facts (a view's ``variant``) call for. */
export function layoutFor(facts) {
  return facts.layout === "props" ? propsLayout(facts) : crapsLayout(facts);
}

function layoutKey(facts) {
  return `${facts.layout}:${facts.points.join(",")}`;
}
