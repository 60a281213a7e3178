import { type ComponentType, createElement, lazy, useState } from 'react';

/**
 * A page whose code loads when it is first shown, like `React.lazy`, with `preload` to start loading it
 * earlier (e.g. while the session is checked, when the address already names the page). A page whose
 * code is in by its first render renders at once: it does not suspend, so React does not hold its
 * reveal back behind a fallback (React 19 throttles fallback reveals by 300 ms).
 */
export function lazyPage<P extends object>(load: () => Promise<{ default: ComponentType<P> }>) {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<{ default: ComponentType<P> }> | undefined;
  const preload = () => {
    pending ??= load().then((module) => {
      loaded = module.default;
      return module;
    });
    return pending;
  };
  const Lazy = lazy(preload);
  function LazyPage(props: P) {
    // Chosen once per mount: switching between the two would mount the page anew.
    const [direct] = useState(() => loaded);
    return direct ? createElement(direct, props) : createElement(Lazy, props);
  }
  return Object.assign(LazyPage, { preload });
}
