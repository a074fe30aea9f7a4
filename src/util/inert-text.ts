/**
 * Agent-written text (a stderr tail, a summary, a test's name) travels into chat and forge messages.
 * There it must stay text: Slack reads `<!channel>` as a mention of everyone and `<https://…|label>` as
 * a link that shows only its label, GitHub reads `@name` as a mention and raw HTML as markup.
 */

/** A word joiner: invisible, and it breaks `@name` so that no chat or forge reads a mention. */
const JOINER = "\u2060";

/** Pure: text made inert for Slack-style chat (and the JSON a webhook gets): `&`, `<`, `>` as entities, @-mentions broken. */
export function chatInert(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replace(/@(?=[\w!-])/g, `@${JOINER}`);
}

/** Pure: text made inert for a forge's Markdown (GitHub): no HTML tag, no @-mention. */
export function markdownInert(text: string): string {
  return text
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replace(/@(?=[\w-])/g, `@${JOINER}`);
}

/**
 * Characters that act on a terminal or reorder what it shows instead of being shown: C0 controls (ESC, a
 * carriage return, a bell…) but the line break and tab, DEL, C1 controls (a one-byte CSI or OSC), and the
 * bidirectional overrides and isolates.
 */
const ACTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Pure: text made inert for a terminal or a text file a person reads (issue 55 §5): every character that
 * would act instead of being shown is written as a visible escape (`\x1b`, `\r`, `\u202e`), so an agent's or an
 * issue's text cannot clear the screen, write over a line, colour a fake "merged", make a link that shows
 * another command, or write the clipboard (OSC 8, OSC 52). Line breaks and tabs stay.
 */
export function terminalInert(text: string): string {
  return text.replace(ACTING, (character) => {
    const code = character.charCodeAt(0);
    if (character === "\r") return "\\r";
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
