// Which console a member of the table's crew gets: the cards a role may act on, read from the
// pack's authority matrix (the same rules the engine authorizes by), in the order that role
// works them; its main action is the first card, so it sits above the fold on a 1024×768
// tablet. Cards nobody in the role may act on are not shown at all.

/** Each card and the rules whose roles act on it (empty: a card anyone at the table watches). */
export const CARD_RULES = {
  "betting-card": ["authority.close_betting"],
  "throw-card": ["authority.record_roll"],
  "rng-card": [],
  "noroll-card": ["noroll.callers", "authority.overturn_no_roll"],
  "dispute-card": ["noroll.callers", "authority.overturn_no_roll", "authority.remove_shooter"],
  "settle-card": ["authority.settle"],
  "shooter-card": ["authority.offer_dice", "authority.remove_shooter"],
  "shaker-card": ["authority.shaker"],
  "dice-card": ["authority.dice"],
  "chips-card": ["authority.chips"],
  "requests-card": ["authority.chips"],
  "book-card": ["authority.wager"],
  "bank-card": ["authority.chips"],
};

export const ROLE_TITLES = {
  stickperson: "Stickperson", boxperson: "Boxperson", dealer: "Dealer", floorperson: "Floorperson",
  "pit-boss": "Pit boss", "shift-manager": "Shift manager", watch: "Watching",
};

/** What each role does, in the order it does it: the first card is the role's main action. */
export const ROLE_ORDER = {
  // the dice, the offer, the throw, the call
  stickperson: ["throw-card", "shooter-card", "noroll-card", "betting-card", "shaker-card", "book-card", "dice-card", "settle-card", "chips-card"],
  // watch the throw and the layout, call, settle disputes, the table's bank and dice
  boxperson: ["dispute-card", "noroll-card", "shooter-card", "dice-card", "chips-card", "bank-card"],
  // book, collect, pay, the chips (and, at Mini-Craps and Props & Hops, the throw too)
  dealer: ["settle-card", "requests-card", "throw-card", "shaker-card", "betting-card", "book-card", "chips-card", "shooter-card", "noroll-card", "dice-card"],
  floorperson: ["dispute-card", "noroll-card", "shooter-card", "dice-card", "bank-card"],
  "pit-boss": ["dispute-card", "noroll-card", "dice-card", "bank-card"],
  "shift-manager": ["dispute-card", "noroll-card", "bank-card"],
};

/** The role this console is for: the one asked for (``?role=``) if held, else the first held. */
export function consoleRole(myRoles, asked) {
  if (asked && myRoles.includes(asked)) return asked;
  const known = Object.keys(ROLE_ORDER).find((r) => myRoles.includes(r));
  return known || myRoles[0] || "watch";
}

/** The cards ``role`` gets at a table whose matrix is ``authority``, in its working order. */
export function cardsFor(role, authority, present) {
  const order = ROLE_ORDER[role] || [];
  const mayAct = (card) => (CARD_RULES[card] || []).some((rule) => (authority[rule] || []).includes(role));
  const out = order.filter((card) => present.has(card) && (mayAct(card) || card === "bank-card" && role !== "stickperson"));
  // an electronic table's RNG card is watched by everyone
  if (present.has("rng-card")) out.unshift("rng-card");
  return out;
}
