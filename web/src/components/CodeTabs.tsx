import { useState } from "react";
import { CopyButton } from "./CopyButton";

/**
 * Code snippets in keyboard-navigable tabs (arrow keys move between tabs), each with a copy
 * button. `id` keeps the tab and panel ids unique when a page shows more than one set.
 */
export function CodeTabs<K extends string>({ id, examples, labels, ariaLabel }: { id: string; examples: Record<K, string>; labels: Record<K, string>; ariaLabel: string }) {
  const order = Object.keys(examples) as K[];
  const [tab, setTab] = useState<K>(order[0]!);
  const tabId = (k: K) => `${id}-tab-${k}`;
  return (
    <>
      <div role="tablist" aria-label={ariaLabel} className="tabs">
        {order.map((k) => (
          <button
            key={k}
            role="tab"
            type="button"
            id={tabId(k)}
            aria-selected={tab === k}
            aria-controls={`${id}-panel-${k}`}
            tabIndex={tab === k ? 0 : -1}
            onClick={() => setTab(k)}
            onKeyDown={(e) => {
              const i = order.indexOf(k);
              const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? order.length - 1 : 0;
              if (!step) return;
              const next = order[(i + step) % order.length]!;
              setTab(next);
              document.getElementById(tabId(next))?.focus();
            }}
          >
            {labels[k]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel-${tab}`} aria-labelledby={tabId(tab)} className="example">
        <div className="example-head">
          <CopyButton text={examples[tab]} what={`${labels[tab]} example`} />
        </div>
        <pre className="code" data-testid={`${id}-${tab}`} tabIndex={0}>
          {examples[tab]}
        </pre>
      </div>
    </>
  );
}
