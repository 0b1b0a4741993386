// record.mjs URL CAPS_JSON OUT: one anonymous session against a Streamable HTTP MCP server:
// initialize (capabilities as given), notifications/initialized, tools/list (every page),
// tools/call of the reserved nonexistent tool. Writes every exchange, with all response
// headers and the raw body, to OUT as JSON.
import { writeFileSync } from "node:fs";
const [url, capsJSON, out] = process.argv.slice(2);
const caps = JSON.parse(capsJSON);
const exchanges = [];
let session = "";
let proto = "";
async function send(name, msg) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (session) headers["mcp-session-id"] = session;
  if (proto) headers["mcp-protocol-version"] = proto;
  const body = JSON.stringify(msg);
  const ctl = new AbortController();
  const res = await fetch(url, { method: "POST", headers, body, signal: ctl.signal });
  const rh = {};
  res.headers.forEach((v, k) => { rh[k] = v; });
  // Read until the response to this request arrived (an event stream may stay open).
  let text = "";
  if (res.body) {
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
      if (msg.id !== undefined && text.includes('"id":' + JSON.stringify(msg.id)) && /\n\n$/.test(text)) { ctl.abort(); break; }
    }
  }
  exchanges.push({ name, request: { headers, body }, response: { status: res.status, headers: rh, body: text } });
  return { res, text };
}
function parse(text) {
  const data = text.split("\n").filter(l => l.startsWith("data:")).map(l => l.slice(5).trim());
  const all = data.length ? data : [text];
  for (const d of all) { try { const m = JSON.parse(d); if (m.result || m.error) return m; } catch {} }
  return null;
}
proto = "2026-07-28";
await send("server/discover", { jsonrpc: "2.0", id: 0, method: "server/discover", params: { _meta: { "io.modelcontextprotocol/clientCapabilities": caps, "io.modelcontextprotocol/clientInfo": { name: "recorder", version: "1" }, "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } });
proto = "";
const init = await send("initialize", { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: caps, clientInfo: { name: "recorder", version: "1" } } });
session = init.res.headers.get("mcp-session-id") || "";
proto = parse(init.text).result.protocolVersion;
await send("notifications/initialized", { jsonrpc: "2.0", method: "notifications/initialized" });
await new Promise(r => setTimeout(r, 100));
let cursor, id = 2, tools = [];
do {
  const params = cursor ? { cursor } : {};
  const r = await send("tools/list", { jsonrpc: "2.0", id: id++, method: "tools/list", params });
  const m = parse(r.text);
  tools.push(...m.result.tools);
  cursor = m.result.nextCursor;
} while (cursor);
await send("tools/call", { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: "probity_reserved_nonexistent_tool", arguments: {} } });
writeFileSync(out, JSON.stringify({ url, capabilities: caps, exchanges }, null, 1) + "\n");
console.log(tools.length, tools.map(t => t.name).join(","));
