/** A server command failed: `message` is the user-visible text, `code` the machine one
 * (the server's tool error code, `server_unavailable`, or `rpc_<code>`). */
export class MetisCommandError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'MetisCommandError';
  }
}
