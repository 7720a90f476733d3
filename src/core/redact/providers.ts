import { mixed, type SecretPattern } from './secret-pattern.js';

/**
 * The catalogue of provider formats: one row per format a provider documents (or its tokens
 * plainly show), each anchored on the provider's own prefix or signature, so ordinary text —
 * prose, code, paths, hashes, UUIDs, git SHAs, base64 of data — does not match. Written for
 * live-mem from the providers' documented formats; public catalogues (gitleaks, GitHub's secret
 * scanning partners, trufflehog) were read to learn the shapes, not copied. Lengths are a little
 * looser than documented where providers have changed them over time.
 *
 * Every regex follows patterns.ts's rules (linear time: a lookbehind of its own class at the
 * start, one character class per open run, bounded repetitions) and every row names `hints`,
 * lowercase literals one of which each match contains: redact.ts finds every hint of every row in
 * one scan of the text, and runs a row only when one of its hints is there.
 *
 * Order is priority: where two rows cover the same text, the first names it (Anthropic's
 * `sk-ant-` before OpenAI's `sk-`, Square's `EAAA` before Facebook's `EAA`).
 */
const row = (provider: string, kind: string, regex: RegExp, hints: string[], valid?: (secret: string) => boolean): SecretPattern => ({
  provider,
  kind,
  regex,
  hints,
  ...(valid ? { valid } : {}),
});

/** Discord bot tokens open with the bot's numeric id in base64: a prefix made only of digits. */
const discordId = (secret: string): boolean => /^[0-9]{15,21}$/.test(Buffer.from(secret.split('.')[0] ?? '', 'base64').toString('latin1'));

export const PROVIDER_PATTERNS: SecretPattern[] = [
  // Cloud providers.
  row('AWS', 'aws-access-key-id', /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/dg, ['akia', 'asia', 'abia', 'acca']),
  // The secret right after its key id, as the console's credentials CSV (`bob,,AKIA…,SECRET,https://…`) lays them out.
  row('AWS', 'aws-secret-key', /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}[ \t]{0,4}[,;|\t][ \t]{0,4}(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dg, [
    'akia',
    'asia',
  ]),
  row('AWS Bedrock', 'aws-bedrock-api-key', /(?<![A-Za-z0-9+/])ABSK[A-Za-z0-9+/]{100,300}={0,2}/dg, ['absk']),
  row('Azure Storage', 'azure-storage-key', /(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey)=(?<s>[A-Za-z0-9+/]{20,256}={0,2})/dgi, [
    'accountkey=',
    'sharedaccesskey=',
  ]),
  row('Azure Storage', 'azure-sas-signature', /[?&;]sig=(?<s>[A-Za-z0-9%+/=]{20,256})/dg, ['sig=']),
  row('Azure AD', 'azure-client-secret', /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/dg, ['q~']),
  row('Azure DevOps', 'azure-devops-pat', /(?<![A-Za-z0-9])[A-Za-z0-9]{40,60}AZDO[A-Za-z0-9]{20,32}(?![A-Za-z0-9])/dg, ['azdo']),
  row('Google Cloud', 'google-api-key', /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/dg, ['aiza']),
  row('Google Cloud', 'google-oauth-client-secret', /(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{24,32}(?![A-Za-z0-9_-])/dg, ['gocspx-']),
  row('Google Cloud', 'google-oauth-token', /(?<![A-Za-z0-9_-])ya29\.[A-Za-z0-9_-]{20,4096}(?![A-Za-z0-9_-])/dg, ['ya29.'], mixed),
  row('Google Cloud', 'google-refresh-token', /(?<![A-Za-z0-9_/-])1\/\/0[A-Za-z0-9_-]{40,512}(?![A-Za-z0-9_-])/dg, ['1//0'], mixed),
  row('Firebase', 'firebase-server-key', /(?<![A-Za-z0-9_-])AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,200}(?![A-Za-z0-9_-])/dg, ['apa91b']),
  row('Alibaba Cloud', 'alibaba-access-key-id', /(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{12,24}(?![A-Za-z0-9])/dg, ['ltai'], mixed),
  row('Tencent Cloud', 'tencent-secret-id', /(?<![A-Za-z0-9])AKID[A-Za-z0-9]{32}(?![A-Za-z0-9])/dg, ['akid'], mixed),
  row('Yandex Cloud', 'yandex-api-key', /(?<![A-Za-z0-9_-])AQVN[A-Za-z0-9_-]{35,38}(?![A-Za-z0-9_-])/dg, ['aqvn']),
  row('DigitalOcean', 'digitalocean-token', /(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])/dg, ['_v1_']),
  row('Heroku', 'heroku-api-key', /(?<![A-Za-z0-9_-])HRKU-[A-Za-z0-9_-]{58,64}(?![A-Za-z0-9_-])/dg, ['hrku-']),
  row('Vercel', 'vercel-token', /(?<![A-Za-z0-9_])vc[pikar]_[A-Za-z0-9]{24,80}(?![A-Za-z0-9_])/dg, ['vcp_', 'vci_', 'vck_', 'vca_', 'vcr_'], mixed),
  row('Netlify', 'netlify-token', /(?<![A-Za-z0-9_])nfp_[A-Za-z0-9]{36,40}(?![A-Za-z0-9_])/dg, ['nfp_'], mixed),
  row('Render', 'render-api-key', /(?<![A-Za-z0-9_])rnd_[A-Za-z0-9]{32}(?![A-Za-z0-9_])/dg, ['rnd_'], mixed),
  row('Fly.io', 'flyio-token', /(?<![A-Za-z0-9+/=,_-])(?:fm2_|fm1[ar]_)[A-Za-z0-9+/=,_-]{40,4096}/dg, ['fm2_', 'fm1a_', 'fm1r_']),
  row('Fly.io', 'flyio-token', /(?<![A-Za-z0-9_-])fo1_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg, ['fo1_']),
  row('Supabase', 'supabase-token', /(?<![A-Za-z0-9_])(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{30,64})(?![A-Za-z0-9_-])/dg, ['sbp_', 'sb_secret_']),
  row('PlanetScale', 'planetscale-token', /(?<![A-Za-z0-9_])pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}(?![A-Za-z0-9_=.-])/dg, ['pscale_']),
  row('Neon', 'neon-api-key', /(?<![A-Za-z0-9_])napi_[a-z0-9]{64}(?![A-Za-z0-9_])/dg, ['napi_']),
  row('Cloudflare', 'cloudflare-origin-ca-key', /(?<![A-Za-z0-9.-])v1\.0-[a-f0-9]{24}-[a-f0-9]{146}(?![A-Za-z0-9])/dg, ['v1.0-']),
  row('Databricks', 'databricks-token', /(?<![A-Za-z0-9_-])dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9_-])/dg, ['dapi'], mixed),
  row('ClickHouse Cloud', 'clickhouse-secret-key', /(?<![A-Za-z0-9])4b1d[A-Za-z0-9]{38}(?![A-Za-z0-9])/dg, ['4b1d'], mixed),
  row('Scalingo', 'scalingo-token', /(?<![A-Za-z0-9_-])tk-us-[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])/dg, ['tk-us-']),
  row('OpenShift', 'openshift-token', /(?<![A-Za-z0-9_-])sha256~[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg, ['sha256~']),
  row('Deno Deploy', 'deno-deploy-token', /(?<![A-Za-z0-9_])dd[pw]_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg, ['ddp_', 'ddw_'], mixed),

  // Infrastructure, secrets managers, CI/CD and source hosting.
  row('HashiCorp Vault', 'vault-token', /(?<![A-Za-z0-9_.-])hv[sbr]\.[A-Za-z0-9_-]{24,400}(?![A-Za-z0-9_-])/dg, ['hvs.', 'hvb.', 'hvr.'], mixed),
  row('HashiCorp Terraform', 'terraform-token', /(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])/dg, ['.atlasv1.']),
  row('Pulumi', 'pulumi-token', /(?<![A-Za-z0-9_-])pul-[a-f0-9]{40}(?![A-Za-z0-9_-])/dg, ['pul-'], mixed),
  row('Doppler', 'doppler-token', /(?<![A-Za-z0-9_.-])dp\.(?:st|ct|sa|scim|audit|pt)\.[A-Za-z0-9_.-]{40,80}(?![A-Za-z0-9_-])/dg, [
    'dp.st.',
    'dp.ct.',
    'dp.sa.',
    'dp.scim.',
    'dp.audit.',
    'dp.pt.',
  ]),
  row('1Password', 'onepassword-token', /(?<![A-Za-z0-9_])ops_eyJ[A-Za-z0-9+/=_-]{100,4096}/dg, ['ops_eyj']),
  // `A3-` then groups of 6, 6, 5, 5, 5, 5 (or 6, 11, 5, 5, 5) letters and digits: the shape is checked on the match.
  row('1Password', 'onepassword-secret-key', /(?<![A-Za-z0-9-])A3-[A-Z0-9]{6}-[A-Z0-9-]{29,35}(?![A-Za-z0-9-])/dg, ['a3-'], (secret) =>
    /^A3-[A-Z0-9]{6}(?:-[A-Z0-9]{6}-[A-Z0-9]{5}|-[A-Z0-9]{11})(?:-[A-Z0-9]{5}){3}$/.test(secret),
  ),
  row('Docker Hub', 'dockerhub-token', /(?<![A-Za-z0-9_-])dckr_(?:pat|oat)_[A-Za-z0-9_-]{24,40}(?![A-Za-z0-9_-])/dg, ['dckr_pat_', 'dckr_oat_']),
  row('GitHub', 'github-token', /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/dg, [
    'ghp_',
    'gho_',
    'ghu_',
    'ghs_',
    'ghr_',
    'github_pat_',
  ]),
  row(
    'GitLab',
    'gitlab-token',
    /(?<![A-Za-z0-9_-])(?:glpat|glrt|gldt|glptt|glft|glsoat|glcbt|glimt|gloas|glagent|glffct)-[A-Za-z0-9_.-]{20,300}(?![A-Za-z0-9_-])/dg,
    ['glpat-', 'glrt-', 'gldt-', 'glptt-', 'glft-', 'glsoat-', 'glcbt-', 'glimt-', 'gloas-', 'glagent-', 'glffct-'],
  ),
  row('GitLab', 'gitlab-token', /(?<![A-Za-z0-9_-])GR1348941[A-Za-z0-9_-]{20,40}(?![A-Za-z0-9_-])/dg, ['gr1348941']),
  row('Bitbucket', 'bitbucket-app-password', /(?<![A-Za-z0-9_=.-])ATBB[A-Za-z0-9_=.-]{28,64}(?![A-Za-z0-9_=-])/dg, ['atbb'], mixed),
  row('Atlassian', 'atlassian-api-token', /(?<![A-Za-z0-9_=-])AT[AC]TT3[A-Za-z0-9_=-]{60,300}(?![A-Za-z0-9_=-])/dg, ['atatt3', 'atctt3']),
  row('Trello', 'trello-token', /(?<![A-Za-z0-9])ATTA[A-Za-z0-9]{56,72}(?![A-Za-z0-9])/dg, ['atta'], mixed),
  row('JFrog', 'jfrog-token', /(?<![A-Za-z0-9])(?:AKCp[A-Za-z0-9]{60,80}|cmVmd[A-Za-z0-9]{59})(?![A-Za-z0-9])/dg, ['akcp', 'cmvmd'], mixed),
  row('SonarQube', 'sonarqube-token', /(?<![A-Za-z0-9_])sq[pua]_[a-f0-9]{40}(?![A-Za-z0-9_])/dg, ['sqp_', 'squ_', 'sqa_'], mixed),
  row('CircleCI', 'circleci-token', /(?<![A-Za-z0-9_])CCIP(?:AT|RJ)_[A-Za-z0-9]{20,26}_[a-f0-9]{40}(?![A-Za-z0-9_])/dg, ['ccipat_', 'cciprj_']),
  row('Buildkite', 'buildkite-token', /(?<![A-Za-z0-9_])bkua_[a-f0-9]{40}(?![A-Za-z0-9_])/dg, ['bkua_'], mixed),
  row('Harness', 'harness-token', /(?<![A-Za-z0-9_.-])(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}(?![A-Za-z0-9_-])/dg, ['pat.', 'sat.']),
  row('Octopus Deploy', 'octopus-api-key', /(?<![A-Za-z0-9_-])API-[A-Z0-9]{26}(?![A-Za-z0-9_-])/dg, ['api-'], mixed),
  row('Prefect', 'prefect-token', /(?<![A-Za-z0-9_])pnu_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg, ['pnu_'], mixed),
  row('Tailscale', 'tailscale-key', /(?<![A-Za-z0-9_-])tskey-[a-z]{3,8}-[A-Za-z0-9]{6,24}-[A-Za-z0-9]{16,48}(?![A-Za-z0-9_-])/dg, ['tskey-']),
  row('Defined Networking', 'defined-networking-token', /(?<![A-Za-z0-9_-])dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}(?![A-Za-z0-9=_-])/dg, ['dnkey-']),
  row('Infracost', 'infracost-token', /(?<![A-Za-z0-9_-])ico-[A-Za-z0-9]{32}(?![A-Za-z0-9_-])/dg, ['ico-'], mixed),
  row('Sourcegraph', 'sourcegraph-token', /(?<![A-Za-z0-9_])sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}(?![A-Za-z0-9_])/dg, ['sgp_'], mixed),
  row('age', 'age-secret-key', /(?<![A-Za-z0-9-])AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])/dg, ['age-secret-key-1']),

  // Package registries.
  row('npm', 'npm-token', /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/dg, ['npm_'], mixed),
  row('PyPI', 'pypi-token', /(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,4096}(?![A-Za-z0-9_-])/dg, ['pypi-age']),
  row('RubyGems', 'rubygems-token', /(?<![A-Za-z0-9_])rubygems_[a-f0-9]{48}(?![A-Za-z0-9_])/dg, ['rubygems_']),
  row('NuGet', 'nuget-api-key', /(?<![A-Za-z0-9])oy2[a-z0-9]{43}(?![A-Za-z0-9])/dg, ['oy2'], mixed),
  row('crates.io', 'crates-io-token', /(?<![A-Za-z0-9])cio[A-Za-z0-9]{32}(?![A-Za-z0-9])/dg, ['cio'], mixed),
  row('Clojars', 'clojars-token', /(?<![A-Za-z0-9_])CLOJARS_[a-z0-9]{60}(?![A-Za-z0-9_])/dg, ['clojars_']),

  // Observability.
  row('Sentry', 'sentry-token', /(?<![A-Za-z0-9_])sntry[su]_[A-Za-z0-9+/=_]{40,400}/dg, ['sntrys_', 'sntryu_']),
  row(
    'New Relic',
    'newrelic-key',
    /(?<![A-Za-z0-9_-])NR(?:AK|II|AA|RA|SP)-[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/dg,
    ['nrak-', 'nrii-', 'nraa-', 'nrra-', 'nrsp-'],
    mixed,
  ),
  row('Grafana', 'grafana-token', /(?<![A-Za-z0-9_])glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9_])/dg, ['glsa_']),
  row('Grafana', 'grafana-token', /(?<![A-Za-z0-9_+/])glc_[A-Za-z0-9+/]{32,400}={0,2}(?![A-Za-z0-9+/=])/dg, ['glc_'], mixed),
  row('Grafana', 'grafana-token', /(?<![A-Za-z0-9+/])eyJrIjoi[A-Za-z0-9+/]{40,400}={0,2}(?![A-Za-z0-9+/=])/dg, ['eyjrijoi']),
  row('Dynatrace', 'dynatrace-token', /(?<![A-Za-z0-9])dt0[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])/dg, ['dt0']),
  row('PostHog', 'posthog-personal-key', /(?<![A-Za-z0-9_])phx_[A-Za-z0-9]{43}(?![A-Za-z0-9_])/dg, ['phx_'], mixed),

  // AI providers.
  row('Anthropic', 'anthropic-api-key', /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/dg, ['sk-ant-']),
  row('OpenRouter', 'openrouter-api-key', /(?<![A-Za-z0-9_-])sk-or-v1-[a-f0-9]{64}(?![A-Za-z0-9_-])/dg, ['sk-or-']),
  row('Langfuse', 'langfuse-secret-key', /(?<![A-Za-z0-9_-])sk-lf-[a-f0-9-]{36}(?![A-Za-z0-9_-])/dg, ['sk-lf-']),
  row('OpenAI', 'openai-api-key', /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/dg, ['sk-'], mixed),
  row('Groq', 'groq-api-key', /(?<![A-Za-z0-9_])gsk_[A-Za-z0-9]{48,56}(?![A-Za-z0-9_])/dg, ['gsk_'], mixed),
  row('xAI', 'xai-api-key', /(?<![A-Za-z0-9_-])xai-[A-Za-z0-9_]{70,90}(?![A-Za-z0-9_-])/dg, ['xai-'], mixed),
  row('Perplexity', 'perplexity-api-key', /(?<![A-Za-z0-9_-])pplx-[A-Za-z0-9]{40,56}(?![A-Za-z0-9_-])/dg, ['pplx-'], mixed),
  row('Replicate', 'replicate-token', /(?<![A-Za-z0-9_])r8_[A-Za-z0-9]{37}(?![A-Za-z0-9_])/dg, ['r8_'], mixed),
  row(
    'Hugging Face',
    'huggingface-token',
    /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,255}(?![A-Za-z0-9_])/dg,
    ['hf_'],
    (secret) => /[A-Z]/.test(secret) && /[a-z]/.test(secret.slice(3)),
  ),
  row('Hugging Face', 'huggingface-token', /(?<![A-Za-z0-9_])api_org_[A-Za-z]{34}(?![A-Za-z0-9_])/dg, ['api_org_'], (secret) => /[A-Z]/.test(secret.slice(8))),
  row('LangSmith', 'langsmith-api-key', /(?<![A-Za-z0-9_])lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}(?![A-Za-z0-9_])/dg, ['lsv2_']),
  row('Pinecone', 'pinecone-api-key', /(?<![A-Za-z0-9_])pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,80}(?![A-Za-z0-9_])/dg, ['pcsk_']),
  row('NVIDIA', 'nvidia-api-key', /(?<![A-Za-z0-9_-])nvapi-[A-Za-z0-9_-]{64}(?![A-Za-z0-9_-])/dg, ['nvapi-']),
  row('Tavily', 'tavily-api-key', /(?<![A-Za-z0-9_-])tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}(?![A-Za-z0-9_-])/dg, ['tvly-'], mixed),
  row('Cerebras', 'cerebras-api-key', /(?<![A-Za-z0-9_-])csk-[a-z0-9]{48}(?![A-Za-z0-9_-])/dg, ['csk-'], mixed),
  row('ElevenLabs', 'elevenlabs-api-key', /(?<![A-Za-z0-9_])sk_[a-f0-9]{48}(?![A-Za-z0-9_])/dg, ['sk_'], mixed),
  row('Firecrawl', 'firecrawl-api-key', /(?<![A-Za-z0-9_-])fc-[a-f0-9]{32}(?![A-Za-z0-9_-])/dg, ['fc-'], mixed),
  row('E2B', 'e2b-api-key', /(?<![A-Za-z0-9_])e2b_[a-f0-9]{40}(?![A-Za-z0-9_])/dg, ['e2b_'], mixed),
  row('Anyscale', 'anyscale-api-key', /(?<![A-Za-z0-9_])esecret_[A-Za-z0-9]{24,64}(?![A-Za-z0-9_])/dg, ['esecret_'], mixed),
  row('Fireworks AI', 'fireworks-api-key', /(?<![A-Za-z0-9_])fw_[A-Za-z0-9]{20,48}(?![A-Za-z0-9_])/dg, ['fw_'], mixed),
  row('Jina AI', 'jina-api-key', /(?<![A-Za-z0-9_])jina_[A-Za-z0-9_-]{40,80}(?![A-Za-z0-9_-])/dg, ['jina_'], mixed),
  row('Browserbase', 'browserbase-api-key', /(?<![A-Za-z0-9_])bb_live_[A-Za-z0-9_-]{20,40}(?![A-Za-z0-9_-])/dg, ['bb_live_'], mixed),

  // Payments and commerce.
  row('Stripe', 'stripe-key', /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,255}(?![A-Za-z0-9_])/dg, [
    'sk_live_',
    'rk_live_',
    'sk_test_',
    'rk_test_',
    'sk_prod_',
    'rk_prod_',
  ]),
  row('Stripe', 'stripe-webhook-secret', /(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/]{32,64}(?![A-Za-z0-9_])/dg, ['whsec_'], mixed),
  row(
    'Square',
    'square-token',
    /(?<![A-Za-z0-9_-])(?:EAAA[A-Za-z0-9_-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43})(?![A-Za-z0-9_-])/dg,
    ['eaaa', 'sq0atp-', 'sq0csp-'],
    mixed,
  ),
  row('Braintree', 'braintree-token', /(?<![A-Za-z0-9_])access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}(?![A-Za-z0-9])/dg, ['access_token$']),
  row(
    'Plaid',
    'plaid-token',
    /(?<![A-Za-z0-9-])access-(?:sandbox|development|production)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}(?![A-Za-z0-9])/dg,
    ['access-sandbox-', 'access-development-', 'access-production-'],
  ),
  row('Flutterwave', 'flutterwave-secret-key', /(?<![A-Za-z0-9_-])FLWSECK(?:_TEST)?-[a-h0-9]{32}-X(?![A-Za-z0-9_-])/dg, ['flwseck']),
  row('Shopify', 'shopify-token', /(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9_])/dg, ['shpat_', 'shpca_', 'shppa_', 'shpss_']),
  row('Shippo', 'shippo-token', /(?<![A-Za-z0-9_])shippo_(?:live|test)_[a-f0-9]{40}(?![A-Za-z0-9_])/dg, ['shippo_']),
  row('EasyPost', 'easypost-api-key', /(?<![A-Za-z0-9])EZ[AT]K[A-Za-z0-9]{54}(?![A-Za-z0-9])/dg, ['ezak', 'eztk'], mixed),
  row('Duffel', 'duffel-token', /(?<![A-Za-z0-9_])duffel_(?:test|live)_[A-Za-z0-9_=-]{43}(?![A-Za-z0-9_=-])/dg, ['duffel_']),

  // Messaging, mail and social.
  row('Slack', 'slack-token', /(?<![A-Za-z0-9_-])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9_-])/dg, ['xox', 'xapp-'], mixed),
  row('Slack', 'slack-webhook', /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]{20,255}/dg, ['hooks.slack.com']),
  row('Discord', 'discord-webhook', /https:\/\/(?:(?:canary|ptb)\.)?discord(?:app)?\.com\/api\/webhooks\/[0-9]{5,30}\/[A-Za-z0-9_-]{20,255}/dg, ['discord']),
  // A bot token has no prefix of its own: only where Discord is named, and only if it opens with a base64 id.
  row(
    'Discord',
    'discord-bot-token',
    /(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/dg,
    ['discord'],
    discordId,
  ),
  row('Telegram', 'telegram-bot-token', /(?<![A-Za-z0-9_:])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/dg, [':aa']),
  row('Microsoft Teams', 'teams-webhook', /https:\/\/[A-Za-z0-9-]{1,64}\.webhook\.office\.com\/webhookb2\/[A-Za-z0-9@/_-]{40,400}/dg, ['webhook.office.com']),
  row('Zapier', 'zapier-webhook', /https:\/\/hooks\.zapier\.com\/hooks\/catch\/[0-9]{3,12}\/[A-Za-z0-9]{4,20}/dg, ['hooks.zapier.com']),
  row('Twilio', 'twilio-api-key', /(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])/dg, ['sk'], mixed),
  row('SendGrid', 'sendgrid-key', /(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg, ['sg.']),
  row('Mailgun', 'mailgun-api-key', /(?<![A-Za-z0-9_-])key-[a-f0-9]{32}(?![A-Za-z0-9_-])/dg, ['key-'], mixed),
  row('Mailchimp', 'mailchimp-api-key', /(?<![A-Za-z0-9_-])[a-f0-9]{32}-us[0-9]{1,2}(?![A-Za-z0-9_-])/dg, ['-us'], mixed),
  row('Brevo', 'brevo-api-key', /(?<![A-Za-z0-9_-])x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}(?![A-Za-z0-9_-])/dg, ['xkeysib-', 'xsmtpsib-']),
  row('Resend', 'resend-api-key', /(?<![A-Za-z0-9_])re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}(?![A-Za-z0-9_])/dg, ['re_'], mixed),
  row('Facebook', 'facebook-access-token', /(?<![A-Za-z0-9])EAA[A-Za-z0-9]{90,1024}(?![A-Za-z0-9])/dg, ['eaa'], mixed),
  row('Instagram', 'instagram-access-token', /(?<![A-Za-z0-9_-])IGQ[VW][A-Za-z0-9_-]{100,1024}(?![A-Za-z0-9_-])/dg, ['igqv', 'igqw'], mixed),
  row('X (Twitter)', 'twitter-bearer-token', /(?<![A-Za-z0-9%])A{22}[A-Za-z0-9%]{30,150}(?![A-Za-z0-9%])/dg, ['aaaaaaaaaaaaaaaaaaaaaa'], mixed),

  // Productivity, CRM and content.
  row('Postman', 'postman-api-key', /(?<![A-Za-z0-9_-])PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9_-])/dg, ['pmak-']),
  row('Linear', 'linear-api-key', /(?<![A-Za-z0-9_])lin_(?:api|oauth)_[A-Za-z0-9]{40}(?![A-Za-z0-9_])/dg, ['lin_api_', 'lin_oauth_'], mixed),
  row('Notion', 'notion-token', /(?<![A-Za-z0-9_])(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,50})(?![A-Za-z0-9_])/dg, ['secret_', 'ntn_'], mixed),
  row('Figma', 'figma-token', /(?<![A-Za-z0-9_])fig[dou]_[A-Za-z0-9_-]{30,60}(?![A-Za-z0-9_-])/dg, ['figd_', 'figo_', 'figu_'], mixed),
  row('Airtable', 'airtable-token', /(?<![A-Za-z0-9])pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])/dg, ['pat']),
  row('HubSpot', 'hubspot-token', /(?<![A-Za-z0-9-])pat-(?:na|eu|ap)[0-9]-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}(?![A-Za-z0-9])/dg, [
    'pat-na',
    'pat-eu',
    'pat-ap',
  ]),
  row('ClickUp', 'clickup-token', /(?<![A-Za-z0-9_])pk_[0-9]{4,12}_[A-Z0-9]{32}(?![A-Za-z0-9_])/dg, ['pk_']),
  row('Intercom', 'intercom-token', /(?<![A-Za-z0-9+/=_-])dG9rO[A-Za-z0-9+/=_-]{40,200}(?![A-Za-z0-9+/=_-])/dg, ['dg9ro']),
  row('Salesforce', 'salesforce-token', /(?<![A-Za-z0-9])00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,300}(?![A-Za-z0-9])/dg, ['00d']),
  row('Typeform', 'typeform-token', /(?<![A-Za-z0-9_])tfp_[A-Za-z0-9_.=-]{40,70}(?![A-Za-z0-9_=-])/dg, ['tfp_'], mixed),
  row('Contentful', 'contentful-token', /(?<![A-Za-z0-9_-])CFPAT-[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg, ['cfpat-']),
  row('Zoho', 'zoho-token', /(?<![A-Za-z0-9.])1000\.[a-f0-9]{32}\.[a-f0-9]{32}(?![A-Za-z0-9])/dg, ['1000.']),
  row('Mapbox', 'mapbox-secret-token', /(?<![A-Za-z0-9_.-])sk\.eyJ[A-Za-z0-9_-]{20,400}\.[A-Za-z0-9_-]{20,100}(?![A-Za-z0-9_-])/dg, ['sk.eyj']),
  row('Dropbox', 'dropbox-token', /(?<![A-Za-z0-9_.-])sl\.(?:u\.)?[A-Za-z0-9_=-]{130,1400}(?![A-Za-z0-9_=-])/dg, ['sl.'], mixed),
  row('ReadMe', 'readme-api-key', /(?<![A-Za-z0-9_])rdme_[a-z0-9]{70}(?![A-Za-z0-9_])/dg, ['rdme_']),
  row('Frame.io', 'frameio-token', /(?<![A-Za-z0-9_-])fio-u-[A-Za-z0-9_=-]{64}(?![A-Za-z0-9_=-])/dg, ['fio-u-']),
  row('Adafruit IO', 'adafruit-io-key', /(?<![A-Za-z0-9_])aio_[A-Za-z0-9]{28}(?![A-Za-z0-9_])/dg, ['aio_'], mixed),
  row('Adobe', 'adobe-client-secret', /(?<![A-Za-z0-9_-])p8e-[A-Za-z0-9]{32}(?![A-Za-z0-9_-])/dg, ['p8e-'], mixed),
  row('Statsig', 'statsig-secret-key', /(?<![A-Za-z0-9_-])secret-[A-Za-z0-9]{40,50}(?![A-Za-z0-9_-])/dg, ['secret-'], mixed),
  row('MaxMind', 'maxmind-license-key', /(?<![A-Za-z0-9_])[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk(?![A-Za-z0-9_])/dg, ['_mmk']),
  row('SettleMint', 'settlemint-token', /(?<![A-Za-z0-9_])sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}(?![A-Za-z0-9_])/dg, ['sm_aat_', 'sm_pat_', 'sm_sat_'], mixed),
  row('live-mem', 'live-mem-token', /(?<![A-Za-z0-9_-])lm_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/dg, ['lm_']),
];
