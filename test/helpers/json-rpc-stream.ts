/**
 * What an MCP stdio server may write on stdout: newline-delimited JSON-RPC 2.0 messages and nothing
 * else (the transport specification's rule). A stray byte — a log line, a BOM, a blank line, a
 * trailing space — corrupts the stream for the client, and the SDK's client transport would skip or
 * hide some of them: this reads the raw bytes.
 */

/** A JSON-RPC message as it was read: its id (requests and responses), its method (requests and notifications). */
export interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * Parses `stdout` as a stdio server's whole output and throws, naming the line, unless it is
 * exactly a sequence of `\n`-terminated lines, each one JSON-RPC 2.0 message written as
 * `JSON.stringify` writes it (no whitespace around it or between its tokens), in UTF-8 without a
 * BOM, where each response answers one of `sentIds` and no id is answered twice.
 */
export function parseJsonRpcStdout(stdout: Uint8Array, sentIds: ReadonlySet<string | number>): JsonRpcMessage[] {
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(stdout);
  if (text !== '' && !text.endsWith('\n')) throw new Error(`stdout does not end with a newline: ${JSON.stringify(text.slice(-40))}`);
  const lines = text.split('\n').slice(0, -1);
  const answered = new Set<string | number>();
  return lines.map((line, index) => {
    const where = `stdout line ${index + 1} ${JSON.stringify(line.slice(0, 80))}`;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      throw new Error(`${where} is not JSON`);
    }
    if (JSON.stringify(message) !== line) throw new Error(`${where} holds more than its JSON (whitespace or a BOM)`);
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw new Error(`${where} is not a JSON-RPC message`);
    const { jsonrpc, id, method } = message as JsonRpcMessage;
    if (jsonrpc !== '2.0') throw new Error(`${where} is not JSON-RPC 2.0`);
    const isResponse = method === undefined;
    if (isResponse && !('result' in message) && !('error' in message)) throw new Error(`${where} has neither a method nor a result or an error`);
    if (isResponse && (id === undefined || id === null || !sentIds.has(id))) throw new Error(`${where} answers an id no request carried`);
    if (isResponse && answered.has(id as string | number)) throw new Error(`${where} answers id ${id} a second time`);
    if (isResponse) answered.add(id as string | number);
    return message as JsonRpcMessage;
  });
}
