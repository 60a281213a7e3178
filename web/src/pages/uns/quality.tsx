const LABELS = ['Good', 'Uncertain', 'Bad'] as const;

/** The quality of a value by colour and in words: 0 good, 1 uncertain, 2 bad. */
export function Quality({ quality }: { quality: number }) {
  const label = LABELS[quality] ?? `Quality ${quality}`;
  return (
    <span className={`quality quality-${quality}`} data-quality={quality}>
      <span className="quality-dot" aria-hidden="true" />
      {label}
    </span>
  );
}

/** The colour of a quality, for the chart's points. */
export function qualityColour(quality: number): string {
  return quality === 0 ? '#1a7f37' : quality === 1 ? '#b7791f' : '#b42318';
}
