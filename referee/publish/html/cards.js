"use strict";
// What the replay and the live pages share: making elements, and drawing a card. The data holds cards in the logs'
// compact form (TH); a person reads them as referee.engine.cards.Card.pretty writes them (10♥): a two-digit ten and the
// suit's symbol. The browser tests hold this to Card.pretty. (Put before each page's own script:
// referee/publish/replay_page.py page_script.)
const el = (tag, cls, text) => {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
};
const SUIT = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const rankText = (text) => (text[0] === "T" ? "10" : text[0]);
const cardText = (text) => rankText(text) + SUIT[text[1]];
// A card face up, or its back where there is no card to show; ``extra`` more classes (new, small).
function card(text, extra) {
  if (!text) return back(extra);
  const node = el("span", "card" + ("DH".includes(text[1]) ? " red" : "") + (extra ? " " + extra : ""));
  node.dataset.card = text;
  node.title = cardText(text);
  node.append(el("span", "r", rankText(text)), el("span", "s", SUIT[text[1]]));
  return node;
}
function back(extra) {
  const node = el("span", "card back" + (extra ? " " + extra : ""));
  node.title = "face down";
  return node;
}
