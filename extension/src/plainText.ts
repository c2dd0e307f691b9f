/**
 * Text from the memory, an agent or the server, as a VS Code notification shows it.
 *
 * A notification's message turns `[label](command:…)`, `[label](https://…)` and
 * `[label](file:…)` into links, and runs a `command:` link's command when it is clicked
 * (vs/base/common/linkedText.ts; the notification opens it with `allowCommands: true`). An
 * entry an agent wrote, such as `- [Reject](command:metis.review.off)`, or the name an MCP
 * client gives itself would become a button of the agent's choosing beside Accept and
 * Reject. A zero-width space between `]` and `(` keeps the text as it reads, and no link.
 */
export function inertLinks(text: string): string {
  return text.replace(/\]\(/g, ']\u200b(');
}
