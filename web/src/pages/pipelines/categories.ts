/** Each node category's colour and icon (the catalogue and the canvas show both). */
export const CATEGORY_STYLE: Record<string, { icon: string; label: string }> = {
  trigger: { icon: '▶', label: 'Triggers' },
  flow: { icon: '◇', label: 'Flow' },
  transform: { icon: 'ƒ', label: 'Transform' },
  code: { icon: '{}', label: 'Code' },
  uns: { icon: '◉', label: 'UNS' },
  integration: { icon: '⇄', label: 'Integration' },
  model: { icon: '▦', label: 'Models' },
};

export const categoryIcon = (category: string | undefined) =>
  (category && CATEGORY_STYLE[category]?.icon) ?? '•';
export const categoryLabel = (category: string) => CATEGORY_STYLE[category]?.label ?? category;
