import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  chartFormatters,
  formatNumber,
  formatTimestamp,
  formatUnsValue,
} from '../web/src/components/format.js';

/** The console's words for numbers and times, in the reader's locale (here named explicitly). */
describe('console formatting: numbers and times in the reader locale', () => {
  it('rounds a latest value sensibly and writes it the locale way, with the unit', () => {
    assert.equal(formatNumber(69.5444513403472, 'en-US'), '69.54');
    assert.equal(formatNumber(69.5444513403472, 'de-DE'), '69,54');
    assert.equal(formatUnsValue(69.5444513403472, '°C', 'de-DE'), '69,54 °C');
    assert.equal(formatNumber(1234567, 'en-US'), '1,234,567');
    assert.equal(formatNumber(1234567, 'de-DE'), '1.234.567');
    assert.equal(formatNumber(0.000123456, 'en-US'), '0.000123');
    assert.equal(formatNumber(-2.5, 'en-US'), '-2.5');
    assert.equal(formatNumber(0, 'en-US'), '0');
    assert.equal(formatUnsValue('running', '°C', 'en-US'), 'running');
    assert.equal(formatUnsValue({ a: 1 }, '', 'en-US'), '{\n  "a": 1\n}');
    assert.equal(formatUnsValue(true, '', 'en-US'), 'true');
  });

  it("writes a value's timestamp in the locale, to the second", () => {
    const at = '2026-11-25T14:05:03.250Z';
    const expected = (locale: string) =>
      new Date(at).toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'medium' });
    assert.equal(formatTimestamp(at, 'de-DE'), expected('de-DE'));
    assert.notEqual(formatTimestamp(at, 'de-DE'), formatTimestamp(at, 'en-US'));
    assert.match(formatTimestamp(at, 'de-DE'), /25\.11\.2026/);
    assert.equal(formatTimestamp(null), '—');
  });

  it("labels the chart's axes and legend in the locale, not in uPlot's US format", () => {
    const de = chartFormatters('°C', 'de-DE');
    const us = chartFormatters('°C', 'en-US');
    const noon = Date.UTC(2026, 10, 25, 12, 30, 15) / 1000;
    const local = new Date(noon * 1000);
    const hh = String(local.getHours()).padStart(2, '0');
    const mm = String(local.getMinutes()).padStart(2, '0');
    // Minute ticks within a day: 24-hour clock in German, AM/PM in US English.
    assert.deepEqual(de.timeTicks([noon], 600, 3600), [`${hh}:${mm}`]);
    assert.match(us.timeTicks([noon], 600, 3600)[0] ?? '', /AM|PM/);
    // Second ticks carry seconds; a range over days carries the date; day ticks only the date.
    assert.match(de.timeTicks([noon], 10, 300)[0] ?? '', /^\d\d:\d\d:\d\d$/);
    assert.match(de.timeTicks([noon], 3600 * 12, 7 * 86_400)[0] ?? '', /25\. Nov\.?.*\d\d:\d\d/);
    assert.match(de.timeTicks([noon], 86_400, 7 * 86_400)[0] ?? '', /^25\. Nov\.?$/);
    assert.match(de.legendTime(noon), /25\.11\.2026/);
    assert.equal(de.legendTime(null), '—');
    assert.equal(de.legendValue(69.5444513403472), '69,54 °C');
    assert.equal(us.legendValue(1234.5), '1,234.5 °C');
    assert.deepEqual(de.valueTicks([1000, 1500.25]), ['1.000', '1.500,25']);
  });
});
