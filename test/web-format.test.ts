import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  chartFormatters,
  formatNumber,
  formatTimestamp,
  formatUnsValue,
  setDisplaySettings,
} from '../web/src/components/format.js';

/** The console's words for numbers and times: the organization's locale, time zone and date format. */
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

  const berlin = { timezone: 'Europe/Berlin', locale: 'de-DE', dateFormat: 'DD.MM.YYYY' } as const;
  const newYork = { timezone: 'America/New_York', locale: 'en-US', dateFormat: 'MM/DD/YYYY' } as const;

  it("writes a value's timestamp in the organization's date format, time zone and clock, to the second", () => {
    const at = '2026-11-25T14:05:03.250Z';
    try {
      setDisplaySettings(berlin);
      assert.equal(formatTimestamp(at), '25.11.2026 15:05:03');
      setDisplaySettings(newYork);
      assert.equal(formatTimestamp(at), '11/25/2026 09:05:03 AM');
      setDisplaySettings({ timezone: 'UTC', locale: 'en-GB', dateFormat: 'YYYY-MM-DD' });
      assert.equal(formatTimestamp(at), '2026-11-25 14:05:03');
      assert.equal(formatTimestamp(null), '—');
    } finally {
      setDisplaySettings(null);
    }
  });

  it("labels the chart's axes and legend in the organization's settings, not in uPlot's US format", () => {
    const noon = Date.UTC(2026, 10, 25, 12, 30, 15) / 1000;
    try {
      setDisplaySettings(berlin);
      const de = chartFormatters('°C');
      // Minute ticks within a day: 24-hour clock in German, in Berlin's time.
      assert.deepEqual(de.timeTicks([noon], 600, 3600), ['13:30']);
      // Second ticks carry seconds; a range over days carries the date; day ticks only the date.
      assert.deepEqual(de.timeTicks([noon], 10, 300), ['13:30:15']);
      assert.deepEqual(de.timeTicks([noon], 3600 * 12, 7 * 86_400), ['25.11.2026 13:30']);
      assert.deepEqual(de.timeTicks([noon], 86_400, 7 * 86_400), ['25.11.2026']);
      assert.equal(de.legendTime(noon), '25.11.2026 13:30:15');
      assert.equal(de.legendTime(null), '—');
      assert.equal(de.legendValue(69.5444513403472), '69,54 °C');
      assert.deepEqual(de.valueTicks([1000, 1500.25]), ['1.000', '1.500,25']);
      setDisplaySettings(newYork);
      const us = chartFormatters('°C');
      assert.deepEqual(us.timeTicks([noon], 600, 3600), ['07:30 AM']);
      assert.equal(us.legendValue(1234.5), '1,234.5 °C');
    } finally {
      setDisplaySettings(null);
    }
  });
});
