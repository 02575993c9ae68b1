// A real OpenID Connect provider for the single sign-on tests: node-oidc-provider (a certified
// implementation) with its development login and consent pages (any password), the
// authorization code and device authorization grants, and one confidential client, bowline.
// Who is in which group is set here. Env: OIDC_PORT, OIDC_REDIRECT_URI, OIDC_CLIENT_SECRET.
// Prints "oidc-provider listening on http://127.0.0.1:PORT" once it serves.
import Provider from "oidc-provider";

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const groups = {
  carol: ["developers"],
  olga: ["ops", "developers"],
  admin: ["developers"],  // the name of bowline's first local account: never taken over
};

const provider = new Provider(issuer, {
  clients: [{
    client_id: "bowline",
    client_secret: process.env.OIDC_CLIENT_SECRET,
    redirect_uris: [process.env.OIDC_REDIRECT_URI],
    grant_types: ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
  }],
  scopes: ["openid", "profile", "email", "groups"],
  claims: { openid: ["sub"], profile: ["preferred_username", "name"], email: ["email"], groups: ["groups"] },
  features: { devInteractions: { enabled: true }, deviceFlow: { enabled: true } },
  cookies: { keys: ["bowline-test-only-cookie-key"] },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: `subject-${id}`, preferred_username: id, name: id, email: `${id}@example.org`, groups: groups[id] || [] };
      },
    };
  },
});
provider.listen(port, "127.0.0.1", () => console.log(`oidc-provider listening on ${issuer}`));
