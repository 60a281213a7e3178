"""Black-box client for Meridian built on Debian's python3-authlib (run with /usr/bin/python3).

authlib does the protocol: authorization URL with PKCE, client authentication, token requests,
state check, refresh, introspection, revocation, and JWT / ID token validation against the JWKS.
HTTP goes through a small requests-like adapter over urllib, because python3-requests is not installed.

Usage: authlib_client.py ISSUER CLIENT_ID CLIENT_SECRET EMAIL PASSWORD REDIRECT_URI ORG_ID
Prints one JSON object with what it observed; exits non-zero on the first failure.
"""
import http.cookiejar
import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from html import unescape

from authlib.common.security import generate_token
from authlib.jose import JsonWebKey, jwt
from authlib.oauth2.client import OAuth2Client
from authlib.oidc.core import CodeIDToken


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Response:
    def __init__(self, status, headers, body):
        self.status_code = status
        self.headers = headers
        self.text = body.decode('utf-8')

    def json(self):
        return json.loads(self.text)

    def raise_for_status(self):
        if self.status_code >= 400:
            raise RuntimeError('HTTP %s: %s' % (self.status_code, self.text))


class Session:
    """Just enough of requests.Session for authlib's OAuth2Client, plus a cookie jar for the pages."""

    def __init__(self):
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())

    def request(self, method, url, data=None, headers=None, auth=None, **kwargs):
        headers = dict(headers or {})
        body = urllib.parse.urlencode(data, doseq=True) if isinstance(data, dict) else (data or None)
        if auth is not None:
            url, headers, body = auth.prepare(method, url, headers, body or '')
        encoded = body.encode('utf-8') if isinstance(body, str) and (body or method == 'POST') else None
        req = urllib.request.Request(url, data=encoded, headers=headers, method=method)
        try:
            with self.opener.open(req) as resp:
                return Response(resp.status, resp.headers, resp.read())
        except urllib.error.HTTPError as error:
            return Response(error.code, error.headers, error.read())

    def post(self, url, data=None, headers=None, auth=None, **kwargs):
        return self.request('POST', url, data=data, headers=headers, auth=auth)

    def get(self, url, headers=None, auth=None, **kwargs):
        return self.request('GET', url, headers=headers, auth=auth)


def read_form(html):
    action = unescape(re.search(r'<form method="post" action="([^"]*)"', html).group(1))
    fields = {m.group(1): unescape(m.group(2)) for m in re.finditer(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', html)}
    scopes = [unescape(m.group(1)) for m in re.finditer(r'name="scope" value="([^"]*)"', html)]
    return action, fields, scopes


def absolute(issuer, path):
    return path if path.startswith('http') else issuer + path


def main():
    issuer, client_id, client_secret, email, password, redirect_uri, org_id = sys.argv[1:8]
    session = Session()
    out = {}
    metadata = session.get(issuer + '/.well-known/openid-configuration').json()
    out['issuer'] = metadata['issuer']
    keys = JsonWebKey.import_key_set(session.get(metadata['jwks_uri']).json())

    client = OAuth2Client(
        session, client_id=client_id, client_secret=client_secret,
        token_endpoint_auth_method='client_secret_basic', redirect_uri=redirect_uri,
        scope='openid profile email organizations:read', code_challenge_method='S256',
    )
    verifier = generate_token(64)
    nonce = generate_token(20)
    url, state = client.create_authorization_url(metadata['authorization_endpoint'], code_verifier=verifier, nonce=nonce)

    # The user: sign in and consent through the HTML forms.
    page = session.get(url)
    action, fields, _ = read_form(page.text)
    fields.update(email=email, password=password)
    login = session.post(absolute(issuer, action), data=fields)
    assert login.status_code == 303, login.text
    page = session.get(absolute(issuer, login.headers['Location']))
    action, fields, scopes = read_form(page.text)
    fields.update(scope=scopes, decision='allow')
    consent = session.post(absolute(issuer, action), data=fields)
    assert consent.status_code == 303, consent.text
    callback = consent.headers['Location']
    out['callback_iss'] = urllib.parse.parse_qs(urllib.parse.urlparse(callback).query)['iss'][0]

    token = client.fetch_token(metadata['token_endpoint'], authorization_response=callback, code_verifier=verifier)
    id_claims = jwt.decode(
        token['id_token'], keys, claims_cls=CodeIDToken,
        claims_options={'iss': {'essential': True, 'value': issuer}},
        claims_params={'nonce': nonce, 'client_id': client_id, 'access_token': token['access_token']},
    )
    id_claims.validate()
    out['id_token_sub'] = id_claims['sub']
    at_claims = jwt.decode(token['access_token'], keys, claims_options={
        'iss': {'essential': True, 'value': issuer},
        'aud': {'essential': True, 'value': issuer + '/api/v1'},
    })
    at_claims.validate()
    out['access_token_sub'] = at_claims['sub']
    out['access_token_typ'] = at_claims.header.get('typ')
    out['scope'] = token['scope']

    api = session.get(issuer + '/api/v1/organizations', headers={
        'Authorization': 'Bearer ' + token['access_token'], 'X-Organization-ID': org_id})
    out['api_status'] = api.status_code
    out['userinfo'] = session.get(metadata['userinfo_endpoint'], headers={'Authorization': 'Bearer ' + token['access_token']}).json()

    old_refresh = token['refresh_token']
    refreshed = client.refresh_token(metadata['token_endpoint'], refresh_token=old_refresh)
    out['refresh_rotated'] = refreshed['refresh_token'] != old_refresh
    access = refreshed['access_token']

    out['introspection_before'] = client.introspect_token(metadata['introspection_endpoint'], token=access).json()
    out['revocation_status'] = client.revoke_token(metadata['revocation_endpoint'], token=access).status_code
    out['introspection_after'] = client.introspect_token(metadata['introspection_endpoint'], token=access).json()
    out['api_status_after_revocation'] = session.get(issuer + '/api/v1/organizations', headers={
        'Authorization': 'Bearer ' + access, 'X-Organization-ID': org_id}).status_code

    service = OAuth2Client(session, client_id=client_id, client_secret=client_secret,
                           token_endpoint_auth_method='client_secret_post', scope='uns:read')
    cc = service.fetch_token(metadata['token_endpoint'], grant_type='client_credentials')
    cc_claims = jwt.decode(cc['access_token'], keys)
    cc_claims.validate()
    out['client_credentials_scope'] = cc['scope']
    out['client_credentials_client_id'] = cc_claims['client_id']
    print(json.dumps(out))


if __name__ == '__main__':
    main()
