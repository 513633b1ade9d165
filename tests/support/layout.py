"""Whether a page fits its window: the checks the layout tests make, with failure messages that name
the element at fault.

A page fits when the document does not scroll sideways, no visible element's right edge lies
past the viewport, and no element cuts off what it holds. An element inside a container that
scrolls sideways (``overflow-x: auto`` or ``scroll``: a wide table in its own scroller, a code
block) is the container's business, not the page's; the container itself is checked like any other
element. A container that clips (``overflow: hidden``) what is wider than it hides words from the
reader, so that is reported too, unless it says so with an ellipsis or is a 1 px hiding place for
screen readers.
"""

from typing import Any

from playwright.sync_api import Locator, Page

PHONE, DESKTOP = 390, 1280
WIDTHS = [PHONE, DESKTOP]

_FIND_OVERFLOW = """
() => {
  const root = document.documentElement;
  const width = root.clientWidth;
  const name = (el) => {
    let text = el.tagName.toLowerCase();
    if (el.id) return text + "#" + el.id;
    const classes = [...el.classList].slice(0, 3);
    if (classes.length) text += "." + classes.join(".");
    return text;
  };
  const path = (el) => {
    const parts = [];
    for (let at = el; at && at !== document.body && parts.length < 5; at = at.parentElement) {
      parts.unshift(name(at));
      if (at.id) break;
    }
    return parts.join(" > ");
  };
  const clippedByAncestor = (el) => {
    for (let at = el.parentElement; at && at !== document.body; at = at.parentElement) {
      if (getComputedStyle(at).overflowX !== "visible") return true;
    }
    return false;
  };
  const offenders = [];
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden") continue;
    // Form fields scroll what is typed in them; everything else that clips hides it.
    const field = ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName);
    const clips = !field && (style.overflowX === "hidden" || style.overflowX === "clip");
    if (clips && el.clientWidth > 1 && el.scrollWidth > el.clientWidth + 1
        && style.textOverflow !== "ellipsis") {
      offenders.push({el, text: `${path(el)} cuts off ${el.scrollWidth - el.clientWidth} px of what it holds`});
      continue;
    }
    if (box.right <= width + 0.5 || clippedByAncestor(el)) continue;
    // Name the outermost element at fault, not each of its children too.
    if (offenders.some((outer) => outer.el.contains(el))) continue;
    offenders.push({el, text: `${path(el)} (right edge at ${Math.round(box.right)} px)`});
  }
  return {
    scrollWidth: root.scrollWidth,
    clientWidth: width,
    offenders: offenders.map((o) => o.text),
  };
}
"""


def overflow_report(page: Page) -> list[str]:
    """What makes ``page`` wider than its window, in words; empty when it fits."""
    found: dict[str, Any] = page.evaluate(_FIND_OVERFLOW)
    problems = list(found["offenders"])
    if found["scrollWidth"] > found["clientWidth"]:
        problems.insert(
            0,
            f"the document is {found['scrollWidth']} px wide in a {found['clientWidth']} px window",
        )
    return problems


def assert_fits(page: Page, what: str) -> None:
    """Fail, naming the elements at fault, if ``page`` is wider than its window."""
    problems = overflow_report(page)
    width = page.viewport_size["width"] if page.viewport_size else "?"
    assert problems == [], f"{what} ({page.url}) does not fit {width} px: " + "; ".join(problems)


def box_of(locator: Locator) -> dict[str, float]:
    """``locator``'s box on the page; fails when it has none (not rendered)."""
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return dict(found)


def inside_viewport(page: Page, locator: Locator) -> bool:
    """Whether the whole of ``locator``'s box lies inside the window as it is scrolled now."""
    box = locator.bounding_box()
    size = page.viewport_size
    if box is None or size is None:
        return False
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= size["width"] + 0.5
        and box["y"] + box["height"] <= size["height"] + 0.5
    )
