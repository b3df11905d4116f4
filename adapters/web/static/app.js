// Progressive enhancement only: every page works without it.
// Replay: a slider over the versions, which submits its version when let go.
for (const form of document.querySelectorAll("form.version-form")) {
  const slider = form.querySelector("input.slider");
  const number = form.querySelector("input.version-number");
  if (!slider || !number) continue;
  slider.hidden = false;
  slider.addEventListener("input", () => { number.value = slider.value; });
  slider.addEventListener("change", () => { form.requestSubmit(); });
}
// Replay: the arrow keys step through the versions (outside text fields).
document.addEventListener("keydown", (event) => {
  if (event.target.closest("input, textarea, select")) return;
  const rel = { ArrowLeft: "prev", ArrowRight: "next" }[event.key];
  const link = rel && document.querySelector(`nav.versions a[rel="${rel}"]`);
  if (link) link.click();
});
