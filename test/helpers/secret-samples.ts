/**
 * One sample per kind of secret live-mem masked before issue 39 (core/redact/providers.ts and
 * patterns.ts; the formats added since are in secret-catalogue.ts), shared by the core and
 * end-to-end tests. Built from parts, so this file holds no literal a secret scanner would flag.
 */
export const j = (...parts: string[]) => parts.join('');
export const AWS_ID = j('AKIA', 'IOSFODNN7', 'EXAMPLE');
const AWS_SECRET = j('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY');
const PEM_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7';
const AZURE_KEY = j('Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UV', 'ErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==');
const JWT = j('eyJhbGciOiJIUzI1NiJ9', '.eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U');

/** What a masked sample reports: one of its kind, unless it says otherwise (a line holding two secrets). */
export const expectedKinds = ([kind, , , also]: Sample): Array<{ kind: string; count: number }> => also ?? [{ kind, count: 1 }];

/** [kind, text holding one secret, the secret, what the answer reports when it is not one of `kind`] */
export type Sample = [string, string, string, Array<{ kind: string; count: number }>?];

const AWS_CSV_SECRET = j('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYzXAMPLEKEY');
const DO_TOKEN = j('dop_v1_', '4a7f0c9e2b1d8f6a3c5e7b9d0f2a4c6e', '8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a');

export const POSITIVES: Sample[] = [
  ['aws-access-key-id', `aws key ${AWS_ID} in the config`, AWS_ID],
  ['aws-access-key-id', `temporary ${j('ASIA', 'Y34FZKBOKMUTVV7A')}`, j('ASIA', 'Y34FZKBOKMUTVV7A')],
  ['aws-secret-key', `aws_secret_access_key = ${AWS_SECRET}`, AWS_SECRET],
  ['aws-secret-key', `export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, AWS_SECRET],
  [
    'private-key',
    `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${PEM_BODY}\\n-----END PRIVATE KEY-----\\n", "client_email": "a@b.iam.gserviceaccount.com"}`,
    PEM_BODY,
  ],
  ['private-key', `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----`, PEM_BODY],
  ['private-key', `-----BEGIN OPENSSH PRIVATE KEY-----\n${PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----\n`, PEM_BODY],
  ['private-key', `pasted half a key:\n-----BEGIN EC PRIVATE KEY-----\n${PEM_BODY}`, PEM_BODY],
  ['azure-storage-key', `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${AZURE_KEY};EndpointSuffix=core.windows.net`, AZURE_KEY],
  ['azure-storage-key', `Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=${AZURE_KEY}`, AZURE_KEY],
  [
    'azure-sas-signature',
    `https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig=${j('c2lnbmF0dXJlIGJ5IGF6dXJl', 'JTJCc2FzMTIz')}`,
    j('c2lnbmF0dXJlIGJ5IGF6dXJl', 'JTJCc2FzMTIz'),
  ],
  ['openai-api-key', `OPENAI key ${j('sk-proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv')}`, j('sk-proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv')],
  ['openai-api-key', `old style ${j('sk-', 'T3BlbkFJ4x9Qm2ZrW8vK1pLs7YdN')}`, j('sk-', 'T3BlbkFJ4x9Qm2ZrW8vK1pLs7YdN')],
  ['anthropic-api-key', `claude: ${j('sk-ant-', 'api03-Zx8Kq2Lm9Np4Rt7Vw1Yb')}`, j('sk-ant-', 'api03-Zx8Kq2Lm9Np4Rt7Vw1Yb')],
  ['google-api-key', `maps ${j('AIza', 'SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW')} ok`, j('AIza', 'SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW')],
  ['stripe-key', `stripe ${j('sk_live_', '4eC39HqLyjWDarjtT1zdp7dc')}`, j('sk_live_', '4eC39HqLyjWDarjtT1zdp7dc')],
  ['stripe-key', `restricted ${j('rk_live_', '51H8s2kLmN0pQrStUvWx')}`, j('rk_live_', '51H8s2kLmN0pQrStUvWx')],
  ['slack-token', `bot ${j('xoxb-', '2345678901-AbCdEfGhIjKl')}`, j('xoxb-', '2345678901-AbCdEfGhIjKl')],
  [
    'slack-webhook',
    `post to ${j('https://hooks.slack.com/services/', 'T0AAAAAAA/B0BBBBBBB/XXXXXXXXXXXXXXXXXXXXXXXX')}`,
    j('https://hooks.slack.com/services/', 'T0AAAAAAA/B0BBBBBBB/XXXXXXXXXXXXXXXXXXXXXXXX'),
  ],
  ['huggingface-token', `hub ${j('hf_', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789')}`, j('hf_', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789')],
  ['github-token', `gh ${j('ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8')}`, j('ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8')],
  ['github-token', `app ${j('ghs_', 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8')}`, j('ghs_', 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8')],
  [
    'github-token',
    `fine ${j('github_pat_', '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz')}`,
    j('github_pat_', '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'),
  ],
  ['gitlab-token', `lab ${j('glpat-', 'xYz12AbC34dEf56GhI78')}`, j('glpat-', 'xYz12AbC34dEf56GhI78')],
  ['npm-token', `npmrc ${j('npm_', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789')}`, j('npm_', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789')],
  ['live-mem-token', `token ${j('lm_', 'Q2xhdWRlIGlzIGhlcmUgdG8gaGVscCB5b3UgdG9kYXk')}`, j('lm_', 'Q2xhdWRlIGlzIGhlcmUgdG8gaGVscCB5b3UgdG9kYXk')],
  ['jwt', `session ${JWT}`, JWT],
  ['bearer-token', `Authorization: Bearer ${j('a8f3k2m9', 'q7w1e5r6t0y4u8i2')}`, j('a8f3k2m9', 'q7w1e5r6t0y4u8i2')],
  ['url-password', 'DATABASE_URL=postgres://admin:s3cr3t-Pa55@db.example.com:5432/app', 's3cr3t-Pa55'],
  ['url-password', 'clone https://bob:hunter2@git.example.com/repo.git', 'hunter2'],
  ['password', 'DB_PASSWORD=hunter2', 'hunter2'],
  ['password', 'mysql -u root --password=hunter2 app', 'hunter2'],
  ['password', 'passwd: "correct horse battery staple"', 'correct horse battery staple'],
  ['password', 'database:\n  password: Tr0ub4dor&3\n  host: db', 'Tr0ub4dor&3'],
  ['password', '{"user": "bob", "password": "p@ss w0rd"}', 'p@ss w0rd'],
  ['password', "conn = connect(host, password='letmein99')", 'letmein99'],
  ['secret', 'client_secret: 9f8e7d6c5b4a', '9f8e7d6c5b4a'],
  ['secret', 'JWT_SECRET="a long random value"', 'a long random value'],
  ['api-key', 'x-api-key: 1234abcd5678efgh', '1234abcd5678efgh'],
  ['api-key', '"apiKey": "AbC123xYz"', 'AbC123xYz'],
  ['token', 'https://api.example.com/v1/items?token=abc123def&page=2', 'abc123def'],
  ['token', 'SLACK_BOT_TOKEN := q1w2e3r4t5', 'q1w2e3r4t5'],
  // Formats a second red-team pass found stored verbatim (issue 28), and their kin.
  ['url-password', `REDIS_URL=${j('redis://:', 'r3d1sPa55', '@cache.internal:6379/0')}`, 'r3d1sPa55'],
  ['url-password', `mongo ${j('mongodb+srv://app:', 'M0ngoPa55', '@cluster0.example.net/db')}`, 'M0ngoPa55'],
  ['url-password', `broker ${j('amqp://guest:', 'Rabb1tPa55', '@mq.example.com:5672/')}`, 'Rabb1tPa55'],
  ['password', 'Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;PWD=0dbcPa55;Encrypt=yes', '0dbcPa55'],
  ['password', 'Server=db;Database=app;User Id=sa;Password=Ad0Pa55!;', 'Ad0Pa55!'],
  ['password', 'export MYSQL_PWD=MyPwdPa55', 'MyPwdPa55'],
  ['password', 'mysql -pMyS3cretPa55 -u root app_db', 'MyS3cretPa55'],
  ['password', "mysqldump -h db -u backup -p'Dump Pa55' app > app.sql", 'Dump Pa55'],
  ['password', 'redis-cli -h cache -a R3disCliPa55 ping', 'R3disCliPa55'],
  ['password', "sshpass -p 'Ssh-Pa55w0rd' ssh deploy@host", 'Ssh-Pa55w0rd'],
  ['password', 'docker login -u bob -p D0ckerPa55 registry.example.com', 'D0ckerPa55'],
  ['password', 'curl -u admin:CurlPa55 https://api.example.com/v1', 'CurlPa55'],
  ['password', 'openssl enc -aes-256-cbc -in a -out b -pass pass:0penSslPa55', '0penSslPa55'],
  ['password', 'machine api.example.com login bob password N3trcPa55', 'N3trcPa55'],
  ['password', 'machine git.example.com\n  login bob\n  password N3trcPa55two', 'N3trcPa55two'],
  ['basic-auth', `Authorization: Basic ${j('YWRtaW46c3Vw', 'ZXJzZWNyZXQx')}`, j('YWRtaW46c3Vw', 'ZXJzZWNyZXQx')],
  [
    'aws-secret-key',
    `bob,,${AWS_ID},${AWS_CSV_SECRET},https://123456789012.signin.aws.amazon.com/console`,
    AWS_CSV_SECRET,
    [
      { kind: 'aws-access-key-id', count: 1 },
      { kind: 'aws-secret-key', count: 1 },
    ],
  ],
  ['gitlab-token', `trigger ${j('glptt-', 'Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2')}`, j('glptt-', 'Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2')],
  ['slack-token', `socket mode ${j('xapp-', '1-A0123456789-1234567890123-abc123def456')}`, j('xapp-', '1-A0123456789-1234567890123-abc123def456')],
  [
    'pypi-token',
    `twine ${j('pypi-AgEIcHlwaS5vcmc', 'CJGI0YjJmNTJkLTE2ZjQtNGE5Yy05ZGQ5LTg5ZjI4ZGY3ZmI4YQACKlsz')}`,
    j('pypi-AgEIcHlwaS5vcmc', 'CJGI0YjJmNTJkLTE2ZjQtNGE5Yy05ZGQ5LTg5ZjI4ZGY3ZmI4YQACKlsz'),
  ],
  [
    'sendgrid-key',
    `mail ${j('SG.', 'ngeVfQFYQlKU0ufo8x5d1A', '.', 'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr')}`,
    j('SG.', 'ngeVfQFYQlKU0ufo8x5d1A', '.', 'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr'),
  ],
  ['digitalocean-token', `doctl ${DO_TOKEN}`, DO_TOKEN],
  ['shopify-token', `admin ${j('shpat_', '0a1b2c3d4e5f60718293a4b5c6d7e8f9')}`, j('shpat_', '0a1b2c3d4e5f60718293a4b5c6d7e8f9')],
  ['google-oauth-token', `access ${j('ya29.', 'a0AfH6SMBx3kLmN0pQrStUvWxYz12345')}`, j('ya29.', 'a0AfH6SMBx3kLmN0pQrStUvWxYz12345')],
  ['telegram-bot-token', `bot ${j('123456789:', 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0')}`, j('123456789:', 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0')],
  [
    'discord-webhook',
    `alerts ${j('https://discord.com/api/webhooks/', '123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCd')}`,
    j('https://discord.com/api/webhooks/', '123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCd'),
  ],
];
