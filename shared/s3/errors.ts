// What an S3 failure may say in status and Events: a code and one short sentence. SDK errors can
// carry request dumps, signed URLs, Authorization headers and (on a deserialization failure) the raw
// response; none of that may reach an object people can read. Pure, table-tested.

export interface ReducedS3Error {
  /** The store's error code (NoSuchBucket, AccessDenied, ...) or a network code (ECONNREFUSED). */
  code: string;
  /** The HTTP status, when the store answered. */
  status?: number;
  /** One line, at most MAX_MESSAGE characters, with anything secret-looking removed. */
  message: string;
}

export const MAX_MESSAGE = 200;
const CODE = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;
/** Codes the SDK uses when the store said nothing it could parse (a HEAD has no body). */
const VAGUE = new Set(['Error', 'Unknown', 'UnknownError', 'NotFound', 'Forbidden']);

interface AwsLikeError {
  name?: unknown;
  Code?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

/**
 * Reduces any thrown value to a code, an HTTP status and a short, redacted message. `secrets` are
 * literal values (the access key pair) removed wherever they appear.
 */
export function reduceS3Error(err: unknown, secrets: readonly string[] = []): ReducedS3Error {
  const e = (typeof err === 'object' && err !== null ? err : {}) as AwsLikeError;
  const statusValue = e.$metadata?.httpStatusCode;
  const status =
    typeof statusValue === 'number' && statusValue >= 100 && statusValue < 600 ? statusValue : undefined;
  const candidates = [e.Code, e.code, e.name].filter(
    (c): c is string => typeof c === 'string' && CODE.test(c),
  );
  // 'Error' and 'UnknownError' say nothing: a network code or the HTTP status says more.
  const specific = candidates.find(c => !VAGUE.has(c));
  const code = specific ?? (status ? `HTTP${status}` : (candidates[0] ?? 'Error'));
  let raw = typeof e.message === 'string' ? e.message : typeof err === 'string' ? err : '';
  if (VAGUE.has(raw) && status) raw = STATUS_TEXT[status] ?? raw;
  return { code, ...(status !== undefined && { status }), message: redact(raw, secrets) || code };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'the store refused the request as malformed',
  401: 'the store did not accept the credentials',
  403: 'access denied: wrong credentials, or the key lacks the permission',
  404: 'not found',
  412: 'a precondition failed',
};

/** The same reduction as one line: `<code> (HTTP <status>): <message>`. */
export function s3ErrorText(reduced: ReducedS3Error): string {
  const status = reduced.status ? ` (HTTP ${reduced.status})` : '';
  return reduced.message === reduced.code
    ? `${reduced.code}${status}`
    : `${reduced.code}${status}: ${reduced.message}`;
}

const REDACTIONS: [RegExp, string][] = [
  // The SDK's hint on a response it could not parse, and everything after it (the raw response).
  [/\s*Deserialization error[\s\S]*$/i, ''],
  [/\s*(?:Raw response|Request|Response)\s*(?:body|headers)?\s*:[\s\S]*$/i, ''],
  // Signature V4 pieces, wherever they appear (headers, query strings, messages quoting them).
  [/AWS4-HMAC-SHA256[^,;\n]*(?:,[^,;\n]*)*/g, '[redacted]'],
  [
    /\b(Credential|Signature|SignedHeaders|X-Amz-[A-Za-z-]+|AWSAccessKeyId|Authorization|x-amz-security-token)\s*[=:]\s*[^\s&,;"']+/gi,
    '$1=[redacted]',
  ],
  // Query strings of URLs (presigned URLs carry their signature there).
  [/(https?:\/\/[^\s?"']+)\?[^\s"']*/g, '$1'],
  // AWS access key ids and anything shaped like a secret access key.
  [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, '[redacted]'],
  [/(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/g, '[redacted]'],
  // XML or HTML bodies quoted whole.
  [/<\?xml[\s\S]*$/i, ''],
  [/<[A-Za-z][\s\S]*$/, ''],
];

function redact(text: string, secrets: readonly string[]): string {
  let out = text.split(/\r?\n/)[0] ?? '';
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  for (const [pattern, replacement] of REDACTIONS) out = out.replace(pattern, replacement);
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE - 1)}…` : out;
}
