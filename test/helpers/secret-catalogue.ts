/**
 * Fake secrets in each provider's shape, one or more per format the catalogue masks
 * (core/redact/providers.ts and the generic shapes of patterns.ts), each in the sentence or file
 * it would be pasted in. Every value is drawn at run time from a seeded generator, so this file
 * holds prefixes and no secret a scanner (or GitHub's push protection) would flag, and no real one.
 * `redTeam` marks the 37 formats the third red-team pass found stored verbatim (issue 39).
 */

/** [kind, text holding one secret, the secret] — as in secret-samples.ts. */
export interface CatalogueSample {
  kind: string;
  text: string;
  secret: string;
  /** A short text holding the secret, fit for a tag or an agent name (64 characters once masked). */
  field: string;
  redTeam: boolean;
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const B62 = UPPER + LOWER + DIGITS;
const B64 = `${B62}+/`;
const URL64 = `${B62}_-`;
const HEX = 'abcdef0123456789';
const UPHEX = 'ABCDEF0123456789';
const LOWNUM = LOWER + DIGITS;
const UPNUM = UPPER + DIGITS;
const BECH32 = 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L';

/** A small seeded generator (mulberry32): the same samples on every run. */
function generator(seed: number): (chars: string, length: number) => string {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return (chars, length) => {
    const out = Array.from({ length }, () => chars[Math.floor(next() * chars.length)] as string);
    // A random token mixes letters and digits: make sure this one does where its alphabet can.
    const letter = [...chars].find((c) => /[A-Za-z]/.test(c));
    const digit = [...chars].find((c) => /[0-9]/.test(c));
    if (letter && digit && length >= 4) {
      out[1] = letter;
      out[2] = digit;
    }
    return out.join('');
  };
}

const g = generator(39);
const uuid = () => [g(HEX, 8), g(HEX, 4), g(HEX, 4), g(HEX, 4), g(HEX, 12)].join('-');
const j = (...parts: string[]) => parts.join('');

/** The field is the sample's own text (it fits). */
const same = 'text' as const;

type Spec = [kind: string, secret: string, text: (secret: string) => string, field?: ((secret: string) => string) | typeof same];

/** The 37 formats of the red-team pass. */
const RED_TEAM: Spec[] = [
  ['vault-token', j('hv', 's.', g(URL64, 91)), (s) => `vault login ${s} then read secret/app`],
  ['dockerhub-token', j('dckr', '_pat_', g(URL64, 27)), (s) => `echo ${s} | docker login -u acme --password-stdin`],
  ['stripe-webhook-secret', j('wh', 'sec_', g(B62, 32)), (s) => `the webhook signing secret is ${s}`],
  ['google-oauth-client-secret', j('GOC', 'SPX-', g(URL64, 28)), (s) => `OAuth client: 1234-abc.apps.googleusercontent.com / ${s}`],
  ['groq-api-key', j('gs', 'k_', g(B62, 52)), (s) => `groq key ${s}`],
  ['xai-api-key', j('xa', 'i-', g(B62, 80)), (s) => `grok via ${s}`],
  ['perplexity-api-key', j('pp', 'lx-', g(B62, 48)), (s) => `sonar with ${s}`],
  ['replicate-token', j('r8', '_', g(B62, 37)), (s) => `replicate run with ${s}`],
  ['gitlab-token', j('GR13', '48941', g(URL64, 20)), (s) => `gitlab-runner register --registration-token ${s}`],
  ['bitbucket-app-password', j('AT', 'BB', g(B62, 32), g(UPHEX, 8)), (s) => `bitbucket app password ${s}`],
  ['atlassian-api-token', j('ATA', 'TT3xFfGF0', g(URL64, 180), '=', g(UPHEX, 8)), (s) => `jira token ${s}`],
  [
    'discord-bot-token',
    j(Buffer.from(j('1', g(DIGITS, 17))).toString('base64'), '.', g(B62, 6), '.', g(URL64, 38)),
    (s) => `Discord bot token: ${s}`,
    (s) => `discord ${s}`,
  ],
  ['twilio-api-key', j('S', 'K', g(HEX, 32)), (s) => `twilio api key ${s} with its secret elsewhere`],
  ['mailgun-api-key', j('ke', 'y-', g(HEX, 32)), (s) => `mailgun: ${s}`],
  ['mailchimp-api-key', j(g(HEX, 32), '-u', 's14'), (s) => `mailchimp ${s}`],
  ['terraform-token', j(g(B62, 14), '.atl', 'asv1.', g(URL64, 67)), (s) => `credentials app.terraform.io ${s}`],
  ['doppler-token', j('dp', '.st.', g(B62, 43)), (s) => `doppler run --token ${s}`],
  ['postman-api-key', j('PM', 'AK-', g(HEX, 24), '-', g(HEX, 34)), (s) => `postman ${s}`],
  ['grafana-token', j('gl', 'sa_', g(B62, 32), '_', g(HEX, 8)), (s) => `grafana service account ${s}`],
  ['newrelic-key', j('NR', 'AK-', g(UPNUM, 27)), (s) => `new relic user key ${s}`],
  ['linear-api-key', j('lin', '_api_', g(B62, 40)), (s) => `linear ${s}`],
  ['notion-token', j('sec', 'ret_', g(B62, 43)), (s) => `notion integration ${s}`],
  ['figma-token', j('fi', 'gd_', g(URL64, 40)), (s) => `figma ${s}`],
  ['airtable-token', j('pa', 't', g(B62, 14), '.', g(HEX, 64)), (s) => `airtable ${s}`],
  ['databricks-token', j('da', 'pi', g(HEX, 32)), (s) => `databricks ${s}`],
  ['square-token', j('EA', 'AA', g(URL64, 60)), (s) => `square access token ${s}`],
  ['braintree-token', j('access_token', '$production$', g(LOWNUM, 16), '$', g(HEX, 32)), (s) => `braintree ${s}`],
  ['facebook-access-token', j('EA', 'ACEdEose0cBA', g(B62, 150)), (s) => `graph api ${s}`],
  ['flyio-token', j('fm', '2_', g(B64, 300)), (s) => `fly deploy -t "FlyV1 ${s}"`],
  ['age-secret-key', j('AGE-SECRET', '-KEY-1', g(BECH32, 58)), (s) => `# created: 2026-01-01\n# public key: age1abc\n${s}`],
  [
    'private-key',
    j(g(B64, 64), '\n', g(B64, 20)),
    (s) =>
      `PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIG\nPrivate-Lines: 2\n${s}\nPrivate-MAC: ${g(HEX, 64)}`,
    (s) => `Private-Lines: 2\n${s}`,
  ],
  ['aws-secret-key', j(g(B64, 40)), (s) => `the AWS secret key is ${s} (rotate monthly)`, (s) => `aws ${s}`],
  ['password', j('Pg', g(B62, 10), '!'), (s) => `psql -h db -U app --password ${s} app`, (s) => `--password ${s}`],
  ['api-key', g(B62, 32), (s) => `curl -H "X-API-Key: ${s}" https://api.example.com/v1`, (s) => `X-API-Key: ${s}`],
  ['auth-header', g(HEX, 40), (s) => `Authorization: Token ${s}`, same],
  [
    'basic-auth',
    Buffer.from(j('acme:', g(B62, 16))).toString('base64'),
    (s) => `{"auths": {"https://index.docker.io/v1/": {"auth": "${s}"}}}`,
    (s) => `"auth": "${s}"`,
  ],
  ['secret', g(HEX, 128), (s) => `SECRET_KEY_BASE=${s}`, same],
];

/** Every other format of the catalogue: one sample each. */
const OTHERS: Spec[] = [
  ['aws-bedrock-api-key', j('AB', 'SK', g(B64, 132)), (s) => `bedrock ${s}`],
  ['azure-client-secret', j(g(B62, 3), '8Q~', g(B62, 34)), (s) => `client secret ${s}`],
  ['azure-devops-pat', j(g(B62, 52), 'AZ', 'DO', g(B62, 28)), (s) => `ado pat ${s}`],
  ['google-refresh-token', j('1/', '/0', g(URL64, 100)), (s) => `refresh ${s}`],
  ['firebase-server-key', j('AAAA', g(URL64, 7), ':APA', '91b', g(URL64, 134)), (s) => `fcm ${s}`],
  ['alibaba-access-key-id', j('LT', 'AI', g(B62, 20)), (s) => `aliyun ${s}`],
  ['tencent-secret-id', j('AK', 'ID', g(B62, 32)), (s) => `tencent ${s}`],
  ['yandex-api-key', j('AQ', 'VN', g(URL64, 36)), (s) => `yandex ${s}`],
  ['heroku-api-key', j('HR', 'KU-AA', g(URL64, 58)), (s) => `heroku ${s}`],
  ['vercel-token', j('vc', 'p_', g(B62, 56)), (s) => `vercel ${s}`],
  ['netlify-token', j('nf', 'p_', g(B62, 36)), (s) => `netlify ${s}`],
  ['render-api-key', j('rn', 'd_', g(B62, 32)), (s) => `render ${s}`],
  ['flyio-token', j('fo', '1_', g(URL64, 43)), (s) => `fly org token ${s}`],
  ['supabase-token', j('sb', 'p_', g(HEX, 40)), (s) => `supabase ${s}`],
  ['planetscale-token', j('pscale', '_tkn_', g(URL64, 43)), (s) => `planetscale ${s}`],
  ['neon-api-key', j('na', 'pi_', g(LOWNUM, 64)), (s) => `neon ${s}`],
  ['cloudflare-origin-ca-key', j('v1', '.0-', g(HEX, 24), '-', g(HEX, 146)), (s) => `origin ca ${s}`],
  ['databricks-token', j('da', 'pi', g(HEX, 32), '-2'), (s) => `workspace token ${s}`],
  ['clickhouse-secret-key', j('4b', '1d', g(B62, 38)), (s) => `clickhouse ${s}`],
  ['scalingo-token', j('tk', '-us-', g(URL64, 48)), (s) => `scalingo ${s}`],
  ['openshift-token', j('sha', '256~', g(URL64, 43)), (s) => `oc login --token=${s}`],
  ['deno-deploy-token', j('dd', 'p_', g(B62, 36)), (s) => `deployctl ${s}`],
  ['pulumi-token', j('pu', 'l-', g(HEX, 40)), (s) => `pulumi ${s}`],
  ['onepassword-token', j('ops', '_eyJ', g(B64, 250)), (s) => `op service account ${s}`],
  [
    'onepassword-secret-key',
    j('A3', '-', g(UPNUM, 6), '-', g(UPNUM, 6), '-', g(UPNUM, 5), '-', g(UPNUM, 5), '-', g(UPNUM, 5), '-', g(UPNUM, 5)),
    (s) => `emergency kit ${s}`,
  ],
  ['gitlab-token', j('gl', 'rt-', g(URL64, 20)), (s) => `runner ${s}`],
  ['atlassian-api-token', j('ATC', 'TT3xFfGN0', g(URL64, 120)), (s) => `connect ${s}`],
  ['trello-token', j('AT', 'TA', g(B62, 64)), (s) => `trello ${s}`],
  ['jfrog-token', j('AK', 'Cp', g(B62, 69)), (s) => `artifactory ${s}`],
  ['jfrog-token', j('cmV', 'md', g(B62, 59)), (s) => `jfrog reference ${s}`],
  ['sonarqube-token', j('sq', 'p_', g(HEX, 40)), (s) => `sonar ${s}`],
  ['circleci-token', j('CCI', 'PAT_', g(B62, 22), '_', g(HEX, 40)), (s) => `circleci ${s}`],
  ['buildkite-token', j('bk', 'ua_', g(HEX, 40)), (s) => `buildkite ${s}`],
  ['harness-token', j('pa', 't.', g(URL64, 22), '.', g(B62, 24), '.', g(B62, 20)), (s) => `harness ${s}`],
  ['octopus-api-key', j('AP', 'I-', g(UPNUM, 26)), (s) => `octopus ${s}`],
  ['prefect-token', j('pn', 'u_', g(B62, 36)), (s) => `prefect ${s}`],
  ['tailscale-key', j('tsk', 'ey-auth-', g(B62, 17), '-', g(B62, 33)), (s) => `tailscale up --auth-key=${s}`],
  ['defined-networking-token', j('dn', 'key-', g(LOWNUM, 26), '-', g(LOWNUM, 52)), (s) => `dnclient ${s}`],
  ['infracost-token', j('ic', 'o-', g(B62, 32)), (s) => `infracost ${s}`],
  ['sourcegraph-token', j('sg', 'p_', g(HEX, 16), '_', g(HEX, 40)), (s) => `src ${s}`],
  ['rubygems-token', j('rubygems', '_', g(HEX, 48)), (s) => `gem push with ${s}`],
  ['nuget-api-key', j('oy', '2', g(LOWNUM, 43)), (s) => `nuget push -k ${s}`],
  ['crates-io-token', j('ci', 'o', g(B62, 32)), (s) => `cargo login ${s}`],
  ['clojars-token', j('CLOJARS', '_', g(LOWNUM, 60)), (s) => `clojars ${s}`],
  ['sentry-token', j('sntry', 'u_', g(HEX, 64)), (s) => `sentry-cli ${s}`],
  ['grafana-token', j('gl', 'c_', g(B64, 100)), (s) => `grafana cloud ${s}`],
  ['grafana-token', j('eyJr', 'Ijoi', g(B62, 70)), (s) => `grafana legacy ${s}`],
  ['dynatrace-token', j('dt0', 'c01.', g(UPNUM, 24), '.', g(UPNUM, 64)), (s) => `dynatrace ${s}`],
  ['posthog-personal-key', j('ph', 'x_', g(B62, 43)), (s) => `posthog ${s}`],
  ['openrouter-api-key', j('sk-', 'or-v1-', g(HEX, 64)), (s) => `openrouter ${s}`],
  ['langfuse-secret-key', j('sk-', 'lf-', uuid()), (s) => `langfuse ${s}`],
  ['huggingface-token', j('api', '_org_', g(UPPER + LOWER, 34)), (s) => `hf org ${s}`],
  ['langsmith-api-key', j('ls', 'v2_pt_', g(HEX, 32), '_', g(HEX, 10)), (s) => `langsmith ${s}`],
  ['pinecone-api-key', j('pc', 'sk_', g(B62, 5), '_', g(B62, 64)), (s) => `pinecone ${s}`],
  ['nvidia-api-key', j('nv', 'api-', g(URL64, 64)), (s) => `nim ${s}`],
  ['tavily-api-key', j('tv', 'ly-', g(B62, 32)), (s) => `tavily ${s}`],
  ['cerebras-api-key', j('cs', 'k-', g(LOWNUM, 48)), (s) => `cerebras ${s}`],
  ['elevenlabs-api-key', j('s', 'k_', g(HEX, 48)), (s) => `elevenlabs ${s}`],
  ['firecrawl-api-key', j('f', 'c-', g(HEX, 32)), (s) => `firecrawl ${s}`],
  ['e2b-api-key', j('e2', 'b_', g(HEX, 40)), (s) => `e2b ${s}`],
  ['anyscale-api-key', j('esec', 'ret_', g(B62, 26)), (s) => `anyscale ${s}`],
  ['fireworks-api-key', j('f', 'w_', g(B62, 24)), (s) => `fireworks ${s}`],
  ['jina-api-key', j('ji', 'na_', g(URL64, 60)), (s) => `jina ${s}`],
  ['browserbase-api-key', j('bb', '_live_', g(URL64, 27)), (s) => `browserbase ${s}`],
  ['stripe-key', j('sk', '_prod_', g(B62, 24)), (s) => `stripe ${s}`],
  ['square-token', j('sq0', 'csp-', g(URL64, 43)), (s) => `square app secret ${s}`],
  ['plaid-token', j('access-', 'production-', uuid()), (s) => `plaid item ${s}`],
  ['flutterwave-secret-key', j('FLWSECK', '_TEST-', g('abcdefgh0123456789', 32), '-X'), (s) => `flutterwave ${s}`],
  ['shippo-token', j('shippo', '_live_', g(HEX, 40)), (s) => `shippo ${s}`],
  ['easypost-api-key', j('EZ', 'AK', g(B62, 54)), (s) => `easypost ${s}`],
  ['duffel-token', j('duffel', '_live_', g(URL64, 43)), (s) => `duffel ${s}`],
  [
    'teams-webhook',
    j('https://acme.web', 'hook.office.com/webhookb2/', uuid(), '@', uuid(), '/IncomingWebhook/', g(HEX, 32), '/', uuid()),
    (s) => `teams alerts go to ${s}`,
  ],
  ['zapier-webhook', j('https://hooks.za', 'pier.com/hooks/catch/', g(DIGITS, 7), '/', g(LOWNUM, 6)), (s) => `zap ${s}`],
  ['brevo-api-key', j('xke', 'ysib-', g(HEX, 64), '-', g(B62, 16)), (s) => `brevo ${s}`],
  ['resend-api-key', j('r', 'e_', g(B62, 8), '_', g(B62, 24)), (s) => `resend ${s}`],
  ['instagram-access-token', j('IG', 'QVJ', g(URL64, 150)), (s) => `instagram ${s}`],
  ['twitter-bearer-token', j('A'.repeat(22), g(B62, 80)), (s) => `twitter app-only ${s}`],
  ['hubspot-token', j('pat-', 'na1-', uuid()), (s) => `hubspot ${s}`],
  ['clickup-token', j('p', 'k_', g(DIGITS, 8), '_', g(UPNUM, 32)), (s) => `clickup ${s}`],
  ['intercom-token', j('dG9r', 'Oj', g(B64, 56), '='), (s) => `intercom ${s}`],
  ['salesforce-token', j('00D', g(B62, 15), '!', g(`${B62}._`, 100)), (s) => `sfdx ${s}`],
  ['typeform-token', j('tf', 'p_', g(URL64, 59)), (s) => `typeform ${s}`],
  ['contentful-token', j('CF', 'PAT-', g(URL64, 43)), (s) => `contentful ${s}`],
  ['zoho-token', j('10', '00.', g(HEX, 32), '.', g(HEX, 32)), (s) => `zoho ${s}`],
  ['mapbox-secret-token', j('sk', '.eyJ1Ijoi', g(URL64, 40), '.', g(URL64, 22)), (s) => `mapbox ${s}`],
  ['dropbox-token', j('s', 'l.', g(URL64, 140)), (s) => `dropbox ${s}`],
  ['readme-api-key', j('rd', 'me_', g(LOWNUM, 70)), (s) => `readme ${s}`],
  ['frameio-token', j('fio', '-u-', g(URL64, 64)), (s) => `frame.io ${s}`],
  ['adafruit-io-key', j('ai', 'o_', g(B62, 28)), (s) => `adafruit ${s}`],
  ['adobe-client-secret', j('p8', 'e-', g(B62, 32)), (s) => `adobe ${s}`],
  ['statsig-secret-key', j('sec', 'ret-', g(B62, 43)), (s) => `statsig ${s}`],
  ['maxmind-license-key', j(g(B62, 6), '_', g(B62, 29), '_m', 'mk'), (s) => `geoipupdate ${s}`],
  ['settlemint-token', j('sm', '_pat_', g(B62, 16)), (s) => `settlemint ${s}`],
  // Generic shapes.
  ['token', g(B62, 24), (s) => `curl --header 'PRIVATE-TOKEN: ${s}' https://gitlab.example.com/api/v4/projects`, (s) => `PRIVATE-TOKEN: ${s}`],
  ['auth-header', g(B62, 40), (s) => `Authorization: SSWS ${s}`, same],
  ['npmrc-auth', uuid(), (s) => `//registry.npmjs.org/:_authToken=${s}`, same],
  ['password', j('Mg', g(B62, 12)), (s) => `mongosh "mongodb://db.example.com/app" -u admin -p ${s}`, (s) => `mongosh -p ${s}`],
  ['password', j('Sq', g(B62, 12), '#'), (s) => `sqlcmd -S db -U sa -P ${s} -Q "select 1"`, (s) => `sqlcmd -P ${s}`],
  ['password', j('Ld', g(B62, 12)), (s) => `ldapsearch -x -D cn=admin,dc=example,dc=com -w ${s} -b dc=example,dc=com`, (s) => `ldapsearch -w ${s}`],
  ['password', j('Pd', g(B62, 12)), (s) => `podman login -u bob -p ${s} quay.io`, (s) => `podman login -p ${s}`],
  ['password', j('Cs', g(B62, 20)), (s) => `az ad sp create --client-secret ${s}`, (s) => `--client-secret ${s}`],
  [
    'password',
    j('Mv', g(B62, 12)),
    (s) => `<server><id>central</id><username>ci</username><password>${s}</password></server>`,
    (s) => `<password>${s}</password>`,
  ],
  ['password', j('Ng', g(B62, 12)), (s) => `<add key="ClearTextPassword" value="${s}" />`, same],
  ['secret', g(HEX, 32), (s) => `RAILS_MASTER_KEY=${s}`, same],
  ['secret', g(B64, 80), (s) => `users:\n- name: admin\n  user:\n    client-key-data: ${s}`, (s) => `client-key-data: ${s}`],
];

function build(specs: Spec[], redTeam: boolean): CatalogueSample[] {
  return specs.map(([kind, secret, text, field]) => ({
    kind,
    secret,
    text: text(secret),
    field: field === same ? text(secret) : field ? field(secret) : secret,
    redTeam,
  }));
}

export const CATALOGUE: CatalogueSample[] = [...build(RED_TEAM, true), ...build(OTHERS, false)];
