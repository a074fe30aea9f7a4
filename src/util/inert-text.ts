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
