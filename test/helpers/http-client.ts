/** A response as tests look at it: status, headers and the parsed JSON body (or text). */
export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  org?: string | null;
  body?: unknown;
  /** Raw body text, sent as is (for invalid JSON and wrong content types). */
  raw?: string;
  headers?: Record<string, string>;
  /** Abandons the request (a test that leaves one waiting). */
  signal?: AbortSignal;
}

/** A credential a test acts with: a bearer token, or a console session (cookie plus CSRF token). */
export interface Credential {
  token?: string;
  cookie?: string;
  csrfToken?: string;
  org?: string;
}

/** A tiny HTTP client over fetch: real requests to a listening server. */
export class TestClient {
  constructor(
    readonly baseUrl: string,
    private readonly credential: Credential = {},
  ) {}

  /** The same client acting with another credential. */
  as(credential: Credential): TestClient {
    return new TestClient(this.baseUrl, credential);
  }

  /** The same credential in another organization (null: no X-Organization-ID header). */
  inOrg(org: string | null): TestClient {
    const { org: _previous, ...rest } = this.credential;
    return new TestClient(this.baseUrl, org === null ? rest : { ...rest, org });
  }

  async request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token ?? this.credential.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.credential.cookie) {
      headers.cookie = this.credential.cookie;
      if (this.credential.csrfToken) headers['x-csrf-token'] = this.credential.csrfToken;
    }
    const org = options.org === undefined ? this.credential.org : options.org;
    if (org) headers['x-organization-id'] = org;
    let body: string | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      body,
      redirect: 'manual',
      signal: options.signal,
    });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, { ...options, body });
  }
  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  /** Signs in through the console login and returns a client acting with that session. */
  async login(email: string, password: string, org?: string): Promise<TestClient> {
    const response = await fetch(`${this.baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    if (response.status !== 200)
      throw new Error(`login of ${email} failed: ${response.status} ${await response.text()}`);
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
    const { data } = (await response.json()) as {
      data: { csrfToken: string; organizations: { id: string }[] };
    };
    return new TestClient(this.baseUrl, {
      cookie,
      csrfToken: data.csrfToken,
      org: org ?? data.organizations[0]?.id,
    });
  }
}
