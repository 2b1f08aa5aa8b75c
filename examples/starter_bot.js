// A starter Gin Rummy bot for gin-arena in Node.js, on the standard library alone (http, crypto).
// Run it:    node examples/starter_bot.js --port 8200 [--secret whsec_...]
//            (or GIN_ARENA_SECRET=whsec_... node examples/starter_bot.js; HOST and PORT work too)
// Check it:  gin-arena bot check http://127.0.0.1:8200 [--secret whsec_...]
// With a secret it verifies the arena's Standard Webhooks signatures (api_spec/README.md,
// "Signing"): 401 for a bad signature or a timestamp over 5 minutes off, 409 for a replayed id.
// Copy it and change `act`: it gets the /act body (api_spec/bot-protocol.yaml) and must return
// one action; this one always answers one of `legal_actions`. The Python starter is
// examples/starter_bot.py.
'use strict';
const http = require('http');
const crypto = require('crypto');

const option = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 1 ? process.argv[i + 1] : undefined;
};
const PORT = Number(option('port') || process.env.PORT || 8200);
const HOST = option('host') || process.env.HOST || '127.0.0.1';
const SECRET = option('secret') || process.env.GIN_ARENA_SECRET || '';
const KEY = SECRET ? Buffer.from(SECRET.replace(/^whsec_/, ''), 'base64') : null;
const seen = new Map(); // webhook-id -> when it was accepted (ms); kept for 10 minutes

function refusal(headers, body) { // null when the request is signed by the arena, else [status, why]
  const id = headers['webhook-id'], ts = headers['webhook-timestamp'];
  const signatures = (headers['webhook-signature'] || '').split(' ');
  if (!id || !ts) return [401, 'missing signature headers'];
  if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return [401, 'timestamp too far off'];
  const mac = crypto.createHmac('sha256', KEY).update(`${id}.${ts}.`).update(body).digest();
  const matches = (s) => {
    const sig = Buffer.from(s.slice(3), 'base64');
    return s.startsWith('v1,') && sig.length === mac.length && crypto.timingSafeEqual(sig, mac);
  };
  if (!signatures.some(matches)) return [401, 'bad signature'];
  const now = Date.now();
  for (const [old, at] of seen) if (now - at > 600000) seen.delete(old);
  if (seen.has(id)) return [409, 'replayed webhook-id'];
  seen.set(id, now);
  return null;
}

const value = (card) => ({ A: 1, T: 10, J: 10, Q: 10, K: 10 })[card[0]] || Number(card[0]);

function act(obs) { // knock (or gin) when allowed, never take the discard, shed the highest card
  const legal = obs.legal_actions;
  const find = (kind) => legal.find((a) => a.action === kind);
  const highest = (kind) => legal.filter((a) => a.action === kind)
    .sort((a, b) => value(b.card) - value(a.card))[0];
  if (obs.phase === 'misknock_response') return find('open_hand');
  if (obs.phase !== 'discard') return find('draw_stock') || find('pass');
  return find('big_gin') || highest('knock') || highest('discard');
}

http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => ((size += chunk.length) > 1e6 ? req.destroy() : chunks.push(chunk)));
  req.on('end', () => {
    const send = (status, data) => {
      const text = JSON.stringify(data);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === 'GET' && req.url === '/') {
      return send(200, { protocol: 'gin-arena/1', name: 'starter-bot-js', author: '', version: '1' });
    }
    if (req.method !== 'POST' || !['/start', '/act', '/end'].includes(req.url)) return send(404, { error: 'not found' });
    const body = Buffer.concat(chunks);
    const refused = KEY && refusal(req.headers, body);
    if (refused) return send(refused[0], { error: refused[1] });
    let obs;
    try { obs = JSON.parse(body); } catch (e) { return send(400, { error: 'the body is not JSON' }); }
    return send(200, req.url === '/act' ? act(obs) : {});
  });
}).listen(PORT, HOST, () => console.error(`starter-bot-js listening on http://${HOST}:${PORT}`));
