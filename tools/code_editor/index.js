// The coding exercise's editor: CodeMirror 6 in an anywidget module.
// course/code_editor.py is its Python side; build.sh bundles this file and
// its npm dependencies (pinned in package-lock.json) into
// course/static/code_editor.js, so that no CDN is needed at run time.
//
// Model traits: value (the piece, synced both ways), first_line (the
// kernel's line number of the piece's first line: the gutter counts from
// it), rows (the visible height in lines). Messages to the kernel:
// {event: "run", value} on Shift-Enter or Ctrl/Cmd-Enter (the panel checks, as
// a Jupyter user expects a run), {event: "save", value} on Ctrl/Cmd-S (the panel
// saves the piece into the learner's file; the browser's "Save page as" never
// opens); value is the editor's text at that key.
import { defaultKeymap, history, historyKeymap, indentLess, indentMore } from "@codemirror/commands";
import { cpp } from "@codemirror/lang-cpp";
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from "@codemirror/language";
import { Compartment, EditorState } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { tags as t } from "@lezer/highlight";

// Colours from JupyterLab's own theme variables, so the Dark theme works.
const v = (name, fallback) => `var(--jp-mirror-editor-${name}-color, ${fallback})`;
const highlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.modifier, t.operatorKeyword], color: v("keyword", "#008000"), fontWeight: "bold" },
  { tag: [t.typeName, t.standard(t.typeName)], color: v("variable-2", "#05a") },
  { tag: [t.number, t.bool, t.null], color: v("number", "#080") },
  { tag: [t.string, t.character], color: v("string", "#ba2121") },
  { tag: [t.comment, t.lineComment, t.blockComment], color: v("comment", "#408080"), fontStyle: "italic" },
  { tag: [t.processingInstruction, t.meta], color: v("meta", "#aa22ff") },
  { tag: [t.operator, t.derefOperator, t.arithmeticOperator], color: v("operator", "#aa22ff") },
  { tag: [t.function(t.variableName), t.definition(t.variableName)], color: v("def", "#00f") },
  { tag: t.bracket, color: v("bracket", "#997") },
]);

const theme = EditorView.theme({
  "&": {
    border: "var(--jp-border-width, 1px) solid var(--jp-border-color1, #bdbdbd)",
    backgroundColor: "var(--jp-cell-editor-background, #f7f7f7)",
    color: "var(--jp-content-font-color1, #000)",
    fontSize: "var(--jp-code-font-size, 13px)",
  },
  "&.cm-focused": { outline: "1px solid var(--jp-brand-color1, #1976d2)" },
  ".cm-scroller": {
    fontFamily: "var(--jp-code-font-family, monospace)",
    lineHeight: "var(--jp-code-line-height, 1.3077)",
  },
  ".cm-content": { caretColor: "var(--jp-editor-cursor-color, #000)" },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--jp-editor-cursor-color, #000)" },
  ".cm-gutters": {
    backgroundColor: "var(--jp-cell-editor-background, #f7f7f7)",
    color: "var(--jp-ui-font-color2, #757575)",
    borderRight: "1px solid var(--jp-border-color2, #e0e0e0)",
  },
  ".cm-activeLine, .cm-activeLineGutter": { backgroundColor: "var(--jp-cell-editor-active-background, rgba(0,0,0,0.04))" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "var(--jp-editor-selected-focused-background, #d9d9d9)",
  },
});

// Tab on a cursor inserts an indent unit there; on a selection it indents
// the selected lines (CodeMirror's indentMore), as JupyterLab's editor does.
function tab(view) {
  if (view.state.selection.ranges.some((r) => !r.empty)) return indentMore(view);
  view.dispatch(view.state.replaceSelection("    "), { scrollIntoView: true, userEvent: "input" });
  return true;
}

function render({ model, el }) {
  // Keys typed here are the editor's: JupyterLab's command-mode shortcuts
  // (x cuts the cell, dd deletes it, 00 restarts the kernel) skip events
  // from inside an element with this attribute (Lumino CommandRegistry).
  el.setAttribute("data-lm-suppress-shortcuts", "true");
  el.classList.add("course-code-editor");
  const gutter = new Compartment();
  const height = new Compartment();
  const numbers = () =>
    lineNumbers({ formatNumber: (n) => String(n + Math.max(1, model.get("first_line")) - 1) });
  const sized = () =>
    EditorView.theme({
      ".cm-content, .cm-gutter": { minHeight: `${model.get("rows") * 1.31 + 0.5}em` },
      ".cm-scroller": { maxHeight: "32em" },
    });
  // A key the kernel acts on: the message, and the key is the editor's (no newline, no browser save).
  // The message carries the text: ipywidgets holds back state updates while one is on its way,
  // and a message is not held back, so it could overtake the last keystrokes.
  const send = (event) => (view) => {
    model.send({ event, value: view.state.doc.toString() });
    return true;
  };
  let fromModel = false;
  const view = new EditorView({
    parent: el,
    state: EditorState.create({
      doc: model.get("value"),
      extensions: [
        gutter.of(numbers()),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        indentUnit.of("    "),
        EditorState.tabSize.of(4),
        // Tab and Shift-Tab indent (CodeMirror's indentWithTab, spelled out
        // so that Tab on a plain cursor inserts an indent unit too).
        keymap.of([
          { key: "Tab", run: tab, shift: indentLess },
          { key: "Shift-Enter", run: send("run") },
          { key: "Mod-Enter", run: send("run") },
          { key: "Mod-s", run: send("save"), preventDefault: true },
          ...defaultKeymap,
          ...historyKeymap,
        ]),
        cpp(),
        syntaxHighlighting(highlight),
        theme,
        height.of(sized()),
        EditorView.contentAttributes.of({ "aria-label": "Your code" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !fromModel) {
            model.set("value", update.state.doc.toString());
            model.save_changes();
          }
        }),
      ],
    }),
  });
  const onValue = () => {
    const value = model.get("value");
    if (value === view.state.doc.toString()) return;
    fromModel = true;
    view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
    fromModel = false;
  };
  const onFirst = () => view.dispatch({ effects: gutter.reconfigure(numbers()) });
  const onRows = () => view.dispatch({ effects: height.reconfigure(sized()) });
  model.on("change:value", onValue);
  model.on("change:first_line", onFirst);
  model.on("change:rows", onRows);
  return () => {
    model.off("change:value", onValue);
    model.off("change:first_line", onFirst);
    model.off("change:rows", onRows);
    view.destroy();
  };
}

export default { render };
