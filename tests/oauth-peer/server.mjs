// A real OpenID Connect / OAuth 2.0 authorization server (npm `oidc-provider`, pinned in
// package.json and its lock) for loopgate's OAuth connection tests, in its stricter
// configurations, plus a small resource API that checks every bearer token with the
// provider itself.
//
//   node server.mjs            prints `listening <port>` once it serves
//
// Configuration (environment):
//   OAUTH_PEER_CLIENT_ID, OAUTH_PEER_CLIENT_SECRET, OAUTH_PEER_REDIRECT_URI  the one client
//   OAUTH_PEER_AUTH_METHODS   token endpoint client auth methods offered, comma-separated
//                             (default `client_secret_post`: post-only)
//   OAUTH_PEER_ACCESS_TTL     access token lifetime in seconds (default 20)
//
// Refresh tokens are issued only for `offline_access`, which oidc-provider grants only
// when the authorization request carries `prompt=consent`. Revocation (RFC 7009),
// introspection and RFC 9207 `iss` are on. The interactions are oidc-provider's own
// development login and consent forms (any login and password).
//
// The resource API: GET /api/me/messages with `Authorization: Bearer <access token>`
// answers 200 with the token's subject, or 401 for a token the provider does not hold
// as active; GET /api/last-token says whether the last token the API saw is still active
// and how many distinct tokens it has seen.
import http from 'node:http';
import Provider from 'oidc-provider';

const env = (k, d) => process.env[k] ?? d;
const clientId = env('OAUTH_PEER_CLIENT_ID', 'loopgate');
const clientSecret = env('OAUTH_PEER_CLIENT_SECRET', 'peer-secret');
const redirectUri = env('OAUTH_PEER_REDIRECT_URI', 'http://127.0.0.1/connect/callback');
const methods = env('OAUTH_PEER_AUTH_METHODS', 'client_secret_post').split(',');
const accessTtl = Number(env('OAUTH_PEER_ACCESS_TTL', '20'));

const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: methods[0],
    }],
    clientAuthMethods: methods,
    scopes: ['openid', 'offline_access', 'mail.read'],
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
    },
    ttl: { AccessToken: accessTtl },
    cookies: { keys: ['loopgate-oauth-peer-test-key'] },
  });
  provider.proxy = false;
  let lastToken = null;
  const seenTokens = new Set();
  const active = async (value) => {
    const token = value && await provider.AccessToken.find(value);
    return Boolean(token && !token.isExpired);
  };
  const json = (res, status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const oidc = provider.callback();
  server.on('request', async (req, res) => {
    if (req.url === '/api/me/messages') {
      const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
      const value = m && m[1];
      lastToken = value;
      if (value) seenTokens.add(value);
      if (!(await active(value))) {
        res.setHeader('www-authenticate', 'Bearer error="invalid_token"');
        return json(res, 401, { error: 'invalid_token' });
      }
      const token = await provider.AccessToken.find(value);
      return json(res, 200, { data: [{ id: 1, subject: 'hello', to: token.accountId }] });
    }
    if (req.url === '/api/last-token') {
      return json(res, 200, {
        seen: lastToken !== null, active: await active(lastToken), distinct: seenTokens.size,
      });
    }
    return oidc(req, res);
  });
  console.log(`listening ${port}`);
});
