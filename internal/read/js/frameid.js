// frameid: the id serialize.js gave the frame element `this` (null when the
// element was not reached, e.g. a hidden frame). Runs with Runtime.callFunctionOn
// on the owner element of a frame, in the world that serialised its document.
function () {
  const ids = window[Symbol.for('dtb.frames')];
  return (ids && ids.get(this)) || null;
}
