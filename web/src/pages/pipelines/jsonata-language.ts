import { StreamLanguage, type StringStream } from '@codemirror/language';

const KEYWORDS = new Set(['and', 'or', 'in', 'function', 'true', 'false', 'null']);

/**
 * JSONata's tokens for highlighting (strings, numbers, comments, `$variables`, backtick names,
 * keywords, operators). Errors come from the jsonata parser itself, not from this.
 */
export const jsonataLanguage = StreamLanguage.define<{ inComment: boolean }>({
  name: 'jsonata',
  startState: () => ({ inComment: false }),
  token(stream: StringStream, state) {
    if (state.inComment) {
      if (stream.skipTo('*/')) {
        stream.next();
        stream.next();
        state.inComment = false;
      } else stream.skipToEnd();
      return 'comment';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('/*')) {
      state.inComment = true;
      return 'comment';
    }
    const quote = stream.peek();
    if (quote === '"' || quote === "'") {
      stream.next();
      let escaped = false;
      for (let c = stream.next(); c !== undefined; c = stream.next()) {
        if (c === quote && !escaped) break;
        escaped = !escaped && c === '\\';
      }
      return 'string';
    }
    if (quote === '`') {
      stream.next();
      stream.skipTo('`') ? stream.next() : stream.skipToEnd();
      return 'propertyName';
    }
    if (stream.match(/^-?\d+(\.\d+)?([eE][+-]?\d+)?/)) return 'number';
    if (stream.match(/^\$[A-Za-z0-9_]*/)) return 'variableName';
    if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*/)) {
      return KEYWORDS.has(stream.current()) ? 'keyword' : 'propertyName';
    }
    if (stream.match(/^(:=|!=|<=|>=|~>|\.\.|\?:|\?\?|[-+*/%&|=<>!?:.])/)) return 'operator';
    stream.next();
    return 'punctuation';
  },
  languageData: { commentTokens: { block: { open: '/*', close: '*/' } } },
});
