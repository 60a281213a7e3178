/**
 * Row types of the tables of one module, as Kysely sees them: An organization's settings, maintenance mode and logo (0009 and later).
 * Times are epoch milliseconds unless said otherwise; booleans are 0/1 integers (see ../tables.ts).
 */

/** Settings of one organization (see modules/organizations/settings) and its maintenance mode. */
export interface OrganizationSettingsTable {
  organization_id: string;
  /** JSON text: the settings document as the API shows it, without maintenance. */
  settings: string;
  version: number;
  maintenance_enabled: number;
  maintenance_reason: string | null;
  maintenance_since: number | null;
  /** When maintenance ends by itself; null: until switched off. */
  maintenance_until: number | null;
  maintenance_by: string | null;
  updated_at: number;
  updated_by: string | null;
}

/** An organization's logo: PNG, JPEG or WebP, checked by its bytes. */
export interface OrganizationLogoTable {
  organization_id: string;
  content_type: 'image/png' | 'image/jpeg' | 'image/webp';
  /** Base64 of the image bytes. */
  data: string;
  size: number;
  etag: string;
  updated_at: number;
  updated_by: string | null;
}
