// autocannon and oidc-provider ship no type declarations; the benchmarks use a small part of each.
declare module 'autocannon';
declare module 'oidc-provider';
