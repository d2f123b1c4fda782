// Every course widget keeps its keys: the browser side of course/_live.py's KeyGuard.
//
// A KeyGuard sits, hidden, in every course widget (a LiveBox, CSS class
// course-live). It finds that box and, once:
// - stops every keydown at the box (JupyterLab listens on the document, in the
//   bubbling phase: JupyterLab.start({bubblingKeydown: true})), so that after a
//   click on Check, a radio button or a drop-down, or a Tab to a button, the
//   notebook's command-mode shortcuts (x, d d, a, b, m, z, Ctrl Backspace ...)
//   never act on the page; the widget's own keys (typing, arrows, Space, Enter
//   on a button) work as before, as they act before the event reaches the box.
//   Ctrl/Cmd-S saves the notebook, as outside a widget, from every part of
//   the box but the code editor (which saves the learner's file): ipywidgets'
//   text, number and text-area boxes stop their keydowns, so there JupyterLab
//   never saw it and the browser's "Save page as" opened; the key is kept here
//   (its default prevented) and handed to JupyterLab as a copy from outside
//   the box;
// - makes the box focusable (tabindex -1) and focuses it after a click that left
//   the focus outside it (a click on its text or background), so that the
//   keys that follow are the box's;
// - Enter in a quiz text or number box, or Shift-Enter in a quiz code box,
//   presses that question's Check (class course-check in a course-question);
//   in the capture phase, as ipywidgets' text box stops its own keydowns;
// - a choice made with the arrow keys counts: ipywidgets' radio buttons have no
//   name (each was a tab stop of its own) and it reads a choice from a click
//   alone, so an arrow moved the dot while the kernel kept "no answer" (Check
//   said "Choose or type an answer first", and the dot went back). Each radio box's
//   buttons get one name (one tab stop, the arrows move within it), and a change
//   that came without a click is handed to ipywidgets as one.
const ROOT = ".course-live";

// One radio group per ipywidgets radio box (its inputs are drawn again when its options change).
function nameRadios(root) {
  for (const box of root.querySelectorAll(".widget-radio-box")) {
    // A name no other box in the window has (this module may run once per widget, and every open
    // page is in the same document): two boxes of one name would be one group.
    if (!box.dataset.courseGroup) {
      box.dataset.courseGroup = `course-radio-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    }
    for (const input of box.querySelectorAll("input[type=radio]")) {
      if (input.name !== box.dataset.courseGroup) input.name = box.dataset.courseGroup;
    }
  }
}

function isSave(e) {
  return (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s";
}

// JupyterLab's save, as a key pressed outside the box: a copy of the keydown, dispatched on the
// box's parent, bubbles to JupyterLab's listener on the document. Lumino reads the key from
// keyCode, which a constructed KeyboardEvent lacks: the copy carries the original's.
function saveOutside(root, e) {
  const copy = new KeyboardEvent("keydown", {
    key: e.key,
    code: e.code,
    ctrlKey: e.ctrlKey,
    metaKey: e.metaKey,
    bubbles: true,
    cancelable: true,
    composed: true,
  });
  Object.defineProperty(copy, "keyCode", { value: e.keyCode });
  Object.defineProperty(copy, "which", { value: e.which });
  (root.parentElement || document.body).dispatchEvent(copy);
}

function checkKey(e) {
  const t = e.target;
  if (e.key !== "Enter" || e.altKey || e.ctrlKey || e.metaKey) return false;
  if (t instanceof HTMLInputElement) return t.type === "text" || t.type === "number";
  return t instanceof HTMLTextAreaElement && e.shiftKey;
}

function keep(root) {
  if (root.dataset.courseKeys === "kept") return;
  root.dataset.courseKeys = "kept";
  if (!root.hasAttribute("tabindex")) root.tabIndex = -1;
  root.addEventListener("keydown", (e) => {
    if (!isSave(e)) e.stopPropagation();
  });
  // Ctrl/Cmd-S, before any part of the box sees it (the capture phase): the code editor keeps its
  // own (it saves the learner's file); anywhere else the notebook is saved, never the browser's page.
  root.addEventListener(
    "keydown",
    (e) => {
      if (!isSave(e) || (e.target instanceof Element && e.target.closest(".cm-editor"))) return;
      e.preventDefault();
      e.stopPropagation();
      saveOutside(root, e);
    },
    true,
  );
  // In the capture phase: ipywidgets' text box stops its keydown before it bubbles to the box.
  root.addEventListener(
    "keydown",
    (e) => {
      if (!checkKey(e)) return;
      const question = e.target.closest(".course-question");
      const check = question && question.querySelector("button.course-check");
      if (check && !check.disabled) {
        e.preventDefault();
        check.click();
      }
    },
    true,
  );
  nameRadios(root);
  root.addEventListener("focusin", () => nameRadios(root));
  let clicked = null; // the radio button a click reached in this task, if any
  root.addEventListener(
    "click",
    (e) => {
      clicked = e.target;
      setTimeout(() => {
        clicked = null;
      }, 0);
    },
    true,
  );
  root.addEventListener("change", (e) => {
    const t = e.target;
    if (t instanceof HTMLInputElement && t.type === "radio" && t.checked && clicked !== t) t.click();
  });
  root.addEventListener("mousedown", () => {
    // After the browser's own focusing (a button, a radio button, an input takes the focus itself).
    setTimeout(() => {
      if (!root.contains(document.activeElement)) root.focus({ preventScroll: true });
    }, 0);
  });
}

function render({ el }) {
  // The box draws its children after this view: look for it until it is in the page.
  let tries = 0;
  const find = () => {
    const root = el.closest(ROOT);
    if (root) keep(root);
    else if (tries++ < 400) setTimeout(find, 50);
  };
  find();
}

export default { render };
