import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { linter, lintGutter } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers } from '@codemirror/view';
import { useEffect, useRef, useState } from 'react';
import { type CodeLanguage, type CodeProblem, problemOf } from './code-diagnostics';
import { jsonataLanguage } from './jsonata-language';

/**
 * A CodeMirror 6 editor for a JSONata or JavaScript parameter: highlighting, and the first syntax error
 * underlined and written out at its line and column. Loaded lazily (it is the heaviest part of the
 * pipeline editor).
 */
export default function CodeEditor(props: {
  name: string;
  label: string;
  language: CodeLanguage;
  value: string;
  onChange: (value: string) => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;
  // The texts this editor handed on lately: a render that brings one of them back (React may render an
  // older one while the next keystroke is in) is its own echo, not a change from outside.
  const emitted = useRef<string[]>([props.value]);
  const [problem, setProblem] = useState<CodeProblem | null>(() => problemOf(props.language, props.value));

  // biome-ignore lint/correctness/useExhaustiveDependencies: one editor per mount; the value is synced below.
  useEffect(() => {
    if (!host.current) return;
    // In a shadow root CodeMirror styles itself through constructed style sheets, which the console's
    // Content Security Policy (style-src 'self', no inline <style>) allows.
    const shadow = host.current.shadowRoot ?? host.current.attachShadow({ mode: 'open' });
    const parent = document.createElement('div');
    shadow.replaceChildren(parent);
    const editor = new EditorView({
      root: shadow,
      parent,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          lineNumbers(),
          history(),
          bracketMatching(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          props.language === 'jsonata' ? jsonataLanguage : javascript(),
          syntaxHighlighting(defaultHighlightStyle),
          lintGutter(),
          linter(
            (v) => {
              const found = problemOf(props.language, v.state.doc.toString());
              return found
                ? [{ from: found.from, to: found.to, severity: 'error', message: found.message }]
                : [];
            },
            { delay: 300 },
          ),
          EditorView.lineWrapping,
          EditorView.theme({
            '&': { maxHeight: '280px', fontSize: '12px', backgroundColor: '#fff' },
            '.cm-scroller': { overflow: 'auto', fontFamily: 'monospace' },
          }),
          EditorView.contentAttributes.of({ 'aria-label': props.label, 'data-code-editor': props.name }),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            const text = update.state.doc.toString();
            setProblem(problemOf(props.language, text));
            emitted.current = [...emitted.current.slice(-49), text];
            onChange.current(text);
          }),
        ],
      }),
    });
    view.current = editor;
    return () => editor.destroy();
  }, []);

  // A value from outside (a reload, a rename) replaces the text.
  useEffect(() => {
    const editor = view.current;
    if (!editor || editor.state.doc.toString() === props.value || emitted.current.includes(props.value))
      return;
    emitted.current = [props.value];
    editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: props.value } });
  }, [props.value]);

  return (
    <div className="code-editor" data-language={props.language}>
      <div ref={host} />
      {problem && (
        <small className="field-error" data-testid="code-error">
          Line {problem.line}, column {problem.column}: {problem.message}
        </small>
      )}
    </div>
  );
}
