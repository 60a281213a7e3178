/** The image types a logo may have; SVG is not one (it can carry script). */
export type LogoContentType = 'image/png' | 'image/jpeg' | 'image/webp';

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];
const startsWith = (bytes: Uint8Array, prefix: number[], at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((b, i) => bytes[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/**
 * The type of an image by its leading bytes (its signature), whatever its name or declared type says:
 * PNG (8-byte signature, PNG spec §5.2), JPEG (SOI marker and the next marker's FF), WebP (a RIFF
 * container of form type WEBP). Anything else, SVG and HTML included, answers null.
 */
export function detectImageType(bytes: Uint8Array): LogoContentType | null {
  if (startsWith(bytes, PNG)) return 'image/png';
  if (startsWith(bytes, JPEG)) return 'image/jpeg';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  return null;
}
