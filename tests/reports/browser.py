"""Open an HTML report in headless Chromium and record what a reader's browser would see.

Test support, not a test module: the report tests call :meth:`BrowserInspector.inspect` through
the session fixture ``browser`` (``tests/reports/conftest.py``), or :func:`inspect_page` for a
one-off check. A :class:`PageInspection` holds everything needed to assert that a page is
self-contained and inert:

* ``console_errors``: the browser log's SEVERE entries (``console.error``, failed loads, bad SVG);
* ``requested_urls``: every URL the page asked the network stack for (``Network.requestWillBeSent``
  in Chromium's performance log), the page's own ``file://`` URL included; ``data:`` URLs are inline
  content and never listed. A request that fails (no network here) is still listed: the attempt is
  what makes a page not self-contained;
* ``images`` and ``inline_svgs``: every ``<img>`` with its decoded (natural) size, and every
  outermost inline ``<svg>`` with its rendered box;
* ``headings``: the ``h1``/``h2`` texts in document order;
* script evidence, from three independent sources: ``executed_scripts`` (V8's precise coverage:
  every page function that ran, inline ``<script>`` bodies and ``on*`` handlers alike),
  ``script_element_count``/``event_handler_element_count``/``javascript_url_count`` (the DOM after
  load) and ``title`` against ``source_title`` (what the file's ``<title>`` says);
* ``screenshot``: a PNG of the top of the page (one window of :data:`WINDOW_SIZE`).

Chromium, chromedriver and selenium are optional: :func:`browser_available` says why they cannot
be used, for a pytest skip reason.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

#: browser window (and so screenshot) size in CSS pixels: wide enough for a report, one tall screen
WINDOW_SIZE = (1280, 2000)
#: the Chromium flags of every session; the profile directory is added per session
CHROMIUM_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    f"--window-size={WINDOW_SIZE[0]},{WINDOW_SIZE[1]}",
)
#: executable names tried, in order, for the browser and its driver
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMEDRIVER_NAMES = ("chromedriver",)
#: a data: image source is cut to this many characters in :class:`ImageState` (the rest is payload)
SOURCE_PREVIEW_LENGTH = 80
#: the DOM attributes whose value is a URL that a ``javascript:`` scheme would turn into script
URL_ATTRIBUTES = ("href", "src", "action", "formaction", "data", "xlink:href")

_PAGE_STATE_SCRIPT = """
const normalized = text => (text || '').replace(/\\s+/g, ' ').trim();
const everyElement = Array.from(document.querySelectorAll('*'));
const attributeNames = element => Array.from(element.attributes).map(a => a.name.toLowerCase());
const urlAttributes = arguments[0];
return {
    title: document.title,
    images: Array.from(document.images).map(image => ({
        source: image.getAttribute('src') || image.currentSrc || '',
        naturalWidth: image.naturalWidth,
        naturalHeight: image.naturalHeight,
        complete: image.complete,
    })),
    svgs: Array.from(document.querySelectorAll('svg'))
        .filter(svg => !(svg.parentElement && svg.parentElement.closest('svg')))
        .map(svg => {
            const box = svg.getBoundingClientRect();
            return {width: box.width, height: box.height};
        }),
    headings: Array.from(document.querySelectorAll('h1, h2')).map(heading => ({
        level: Number(heading.tagName.substring(1)),
        text: normalized(heading.textContent),
    })),
    scriptElements: document.getElementsByTagName('script').length,
    eventHandlerElements: everyElement.filter(
        element => attributeNames(element).some(name => name.startsWith('on'))).length,
    javascriptUrls: everyElement.filter(element => urlAttributes.some(name => {
        const value = element.getAttribute(name);
        return value !== null && /^\\s*javascript:/i.test(value);
    })).length,
};
"""

_LAYOUT_SCRIPT = """
const box = element => {
    const rect = element.getBoundingClientRect();
    return {top: rect.top + window.scrollY, left: rect.left + window.scrollX, width: rect.width,
            height: rect.height};
};
const normalized = text => (text || '').replace(/\\s+/g, ' ').trim();
const content = document.body.getBoundingClientRect();
const bodyStyle = getComputedStyle(document.body);
return {
    viewportWidth: document.documentElement.clientWidth,
    scrollWidth: document.documentElement.scrollWidth,
    contentWidth: content.width - parseFloat(bodyStyle.paddingLeft) - parseFloat(bodyStyle.paddingRight),
    pageHeight: document.documentElement.scrollHeight,
    images: Array.from(document.images).map(image => ({
        box: box(image), naturalWidth: image.naturalWidth, naturalHeight: image.naturalHeight,
        alt: image.getAttribute('alt') || ''})),
    blocks: Array.from(document.querySelectorAll('section[id] > *')).filter(element => element.offsetParent !== null)
        .map(element => ({section: element.parentElement.id, tag: element.tagName.toLowerCase(),
                          cls: element.className || '', text: normalized(element.textContent).substring(0, 2000),
                          box: box(element)})),
};
"""

_IMAGES_SETTLED_SCRIPT = "return Array.from(document.images).every(image => image.complete);"


@dataclass(frozen=True)
class Box:
    """An element's rendered box in CSS pixels, from the top left of the page (not of the window)."""

    top: float
    left: float
    width: float
    height: float

    @property
    def bottom(self) -> float:
        """The page coordinate of its lower edge."""
        return self.top + self.height

    @property
    def right(self) -> float:
        """The page coordinate of its right edge."""
        return self.left + self.width


@dataclass(frozen=True)
class PlacedImage:
    """An ``<img>`` as laid out: its box, its decoded size and its alt text (the figure's caption)."""

    box: Box
    natural_width: int
    natural_height: int
    alt: str


@dataclass(frozen=True)
class PlacedBlock:
    """A visible child of a ``<section id>``: its section, tag, class, first 2,000 characters and box."""

    section: str
    tag: str
    css_class: str
    text: str
    box: Box


@dataclass(frozen=True)
class PageLayout:
    """Where things are on a laid-out page, as a reader scrolling it sees them.

    Attributes
    ----------
    viewport_width : int
        The window's layout width (CSS px).
    scroll_width : int
        The document's width: larger than ``viewport_width`` when something overflows sideways.
    content_width : float
        The width of the page's text column (the body less its padding).
    page_height : int
        The document's height.
    images : tuple of PlacedImage
        Every image, laid out.
    blocks : tuple of PlacedBlock
        Every visible child element of a section, in document order.
    screenshot_top, screenshot_full : pathlib.Path
        PNGs of the first :data:`ABOVE_THE_FOLD` pixels and of the whole page (scaled to half size).
    """

    viewport_width: int
    scroll_width: int
    content_width: float
    page_height: int
    images: tuple[PlacedImage, ...]
    blocks: tuple[PlacedBlock, ...]
    screenshot_top: Path
    screenshot_full: Path

    def section_blocks(self, section: str) -> tuple[PlacedBlock, ...]:
        """The visible blocks of the section whose id ends with ``section`` (``"conclusion"``)."""
        return tuple(block for block in self.blocks if block.section.endswith(section))


#: what a reader sees before scrolling, in CSS pixels (a laptop window)
ABOVE_THE_FOLD = 900


class BrowserStartError(RuntimeError):
    """Chromium or chromedriver did not come up (in time)."""


@dataclass(frozen=True)
class ImageState:
    """One ``<img>`` after load: a zero ``natural_width`` means it did not decode.

    Attributes
    ----------
    source : str
        The ``src`` attribute, cut to :data:`SOURCE_PREVIEW_LENGTH` characters.
    natural_width, natural_height : int
        The decoded bitmap's size in pixels; 0 for a broken or not (yet) loaded image.
    complete : bool
        Whether the browser finished with the image (loaded or failed).
    """

    source: str
    natural_width: int
    natural_height: int
    complete: bool

    @property
    def decoded(self) -> bool:
        """Whether the image loaded and decoded to a non-empty bitmap."""
        return self.complete and self.natural_width > 0


@dataclass(frozen=True)
class InlineSvg:
    """The rendered box of one outermost inline ``<svg>`` element, in CSS pixels."""

    width: float
    height: float


@dataclass(frozen=True)
class Heading:
    """An ``h1`` or ``h2`` element: its level (1 or 2) and whitespace-normalised text."""

    level: int
    text: str


@dataclass(frozen=True)
class ExecutedScript:
    """Page code that ran: the script's URL and the functions called in it.

    An inline ``<script>`` body shows up as the page's URL with function name ``""``;
    an ``onerror="..."`` attribute as the page's URL with function name ``"onerror"``.
    """

    url: str
    function_names: tuple[str, ...]


@dataclass(frozen=True)
class PageInspection:
    """What headless Chromium saw while loading one page.

    Attributes
    ----------
    page_url : str
        The ``file://`` URL that was opened.
    source_title : str or None
        The ``<title>`` text as written in the file (None when the file has none).
    title : str
        ``document.title`` after load: differs from ``source_title`` when a script changed it.
    console_errors : tuple of str
        Browser log messages of level SEVERE (console errors, failed loads, SVG parse errors).
    requested_urls : tuple of str
        Every URL the page requested, in order, the page itself included; ``data:`` URLs excluded.
    images : tuple of ImageState
        Every ``<img>`` in document order.
    inline_svgs : tuple of InlineSvg
        Every outermost inline ``<svg>`` (nested ``<svg>`` are part of their parent).
    headings : tuple of Heading
        The ``h1`` and ``h2`` elements in document order.
    executed_scripts : tuple of ExecutedScript
        Page scripts with at least one function that ran during load (V8 precise coverage).
    script_element_count : int
        ``<script>`` elements in the DOM after load (HTML and SVG).
    event_handler_element_count : int
        Elements carrying any ``on*`` attribute.
    javascript_url_count : int
        Elements with a ``javascript:`` URL in one of :data:`URL_ATTRIBUTES`.
    screenshot : pathlib.Path
        The PNG of the top of the page.
    """

    page_url: str
    source_title: str | None
    title: str
    console_errors: tuple[str, ...]
    requested_urls: tuple[str, ...]
    images: tuple[ImageState, ...]
    inline_svgs: tuple[InlineSvg, ...]
    headings: tuple[Heading, ...]
    executed_scripts: tuple[ExecutedScript, ...]
    script_element_count: int
    event_handler_element_count: int
    javascript_url_count: int
    screenshot: Path

    @property
    def foreign_requests(self) -> tuple[str, ...]:
        """Requested URLs other than the page itself: empty for a self-contained page."""
        return tuple(url for url in self.requested_urls if url.split("#", 1)[0] != self.page_url)

    @property
    def broken_images(self) -> tuple[ImageState, ...]:
        """The images that did not decode."""
        return tuple(image for image in self.images if not image.decoded)

    @property
    def heading_texts(self) -> tuple[str, ...]:
        """The texts of :attr:`headings`, in document order."""
        return tuple(heading.text for heading in self.headings)

    @property
    def title_changed(self) -> bool:
        """Whether ``document.title`` differs from the file's ``<title>`` (a script rewrote it)."""
        return _normalize_space(self.source_title or "") != _normalize_space(self.title)

    @property
    def ran_script(self) -> bool:
        """Whether any page code ran, by coverage or by the title's evidence."""
        return bool(self.executed_scripts) or self.title_changed

    @property
    def script_hook_count(self) -> int:
        """Places in the DOM that could run script: ``<script>``, ``on*`` attributes, ``javascript:`` URLs."""
        return self.script_element_count + self.event_handler_element_count + self.javascript_url_count


def find_chromium() -> str | None:
    """Return the path of the Chromium (or Chrome) executable on ``PATH``, or None."""
    return _first_on_path(CHROMIUM_NAMES)


def find_chromedriver() -> str | None:
    """Return the path of the chromedriver executable on ``PATH``, or None."""
    return _first_on_path(CHROMEDRIVER_NAMES)


def browser_version(executable: str) -> str | None:
    """Return the ``--version`` line of a browser or driver executable, or None when it fails to run."""
    try:
        completed = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"\S+ \d+(\.\d+)+", completed.stdout)
    return match.group(0) if completed.returncode == 0 and match else None


def browser_available() -> str | None:
    """Say why the headless-browser checks cannot run here, or None when they can.

    Returns
    -------
    str or None
        None when selenium imports and a Chromium and a chromedriver of the same major version
        are on ``PATH``; otherwise one sentence naming what is missing (a pytest skip reason).
    """
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install -e '.[test]')"
    chromium = find_chromium()
    if chromium is None:
        return f"no Chromium on PATH (tried {', '.join(CHROMIUM_NAMES)}; apt-get install chromium)"
    chromedriver = find_chromedriver()
    if chromedriver is None:
        return "no chromedriver on PATH (apt-get install chromium-driver)"
    browser, driver = browser_version(chromium), browser_version(chromedriver)
    if browser is None or driver is None:
        return f"cannot read the version of {chromium if browser is None else chromedriver}"
    if _major_version(browser) != _major_version(driver):
        return f"{browser} does not match {driver}: chromedriver drives only its own Chromium major version"
    return None


class BrowserInspector:
    """One headless Chromium session that inspects page after page.

    Start it with :meth:`start` (about a second) and close it with :meth:`close`, or use it as a
    context manager. Every :meth:`inspect` first returns the tab to ``about:blank`` and drains the
    logs, so no page sees another's errors, requests or executed scripts.

    Parameters
    ----------
    driver : selenium.webdriver.chrome.webdriver.WebDriver
        A running driver with the browser and performance logs enabled (see :meth:`start`).
    profile_directory : tempfile.TemporaryDirectory or None
        The private ``--user-data-dir``, removed on :meth:`close`.
    """

    def __init__(self, driver: WebDriver, profile_directory: tempfile.TemporaryDirectory | None = None) -> None:
        self._driver = driver
        self._profile_directory = profile_directory
        # V8 precise coverage lists every function that ran, per script URL; it lasts across navigations
        driver.execute_cdp_cmd("Profiler.enable", {})
        driver.execute_cdp_cmd("Profiler.startPreciseCoverage", {"callCount": True, "detailed": False})
        self._reset_tab()

    @classmethod
    def start(cls, *, start_timeout: float = 60.0, page_timeout: float = 30.0) -> Self:
        """Start headless Chromium through chromedriver, with a private temporary profile.

        Parameters
        ----------
        start_timeout : float
            Seconds to wait for chromedriver and Chromium to come up; past that, both are killed.
        page_timeout : float
            Seconds one page may take to load, and one injected script to run.

        Returns
        -------
        BrowserInspector

        Raises
        ------
        BrowserStartError
            When the browser does not start, or not within ``start_timeout``.
        """
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        chromium, chromedriver = find_chromium(), find_chromedriver()
        if chromium is None or chromedriver is None:
            raise BrowserStartError(browser_available() or "Chromium or chromedriver is missing")
        profile_directory = tempfile.TemporaryDirectory(prefix="bayesclass-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for argument in (*CHROMIUM_ARGUMENTS, f"--user-data-dir={profile_directory.name}"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        service = Service(executable_path=chromedriver)

        outcome: dict[str, Any] = {}

        def launch() -> None:
            try:
                outcome["driver"] = webdriver.Chrome(service=service, options=options)
            except BaseException as error:  # reported to the waiting thread below
                outcome["error"] = error

        launcher = threading.Thread(target=launch, name="chromium-launcher", daemon=True)
        launcher.start()
        launcher.join(start_timeout)
        if launcher.is_alive():
            service.stop()  # kills chromedriver, which takes its Chromium with it and unblocks the launcher
            launcher.join(10)
            if "driver" in outcome:
                outcome["driver"].quit()
            profile_directory.cleanup()
            raise BrowserStartError(f"Chromium did not start within {start_timeout:g} s")
        if "error" in outcome:
            profile_directory.cleanup()
            raise BrowserStartError(f"Chromium did not start: {outcome['error']}") from outcome["error"]
        driver = outcome["driver"]
        try:
            driver.set_page_load_timeout(page_timeout)
            driver.set_script_timeout(page_timeout)
            return cls(driver, profile_directory)
        except BaseException:
            driver.quit()
            profile_directory.cleanup()
            raise

    def inspect(self, path: Path, *, screenshot: Path, image_timeout: float = 5.0) -> PageInspection:
        """Load a local HTML file and record what the browser saw.

        Parameters
        ----------
        path : pathlib.Path
            The HTML file.
        screenshot : pathlib.Path
            Where to save the PNG of the top of the page (parent folders are created).
        image_timeout : float
            Seconds to wait, after the load event, for every ``<img>`` to finish (load or fail).

        Returns
        -------
        PageInspection
        """
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support.wait import WebDriverWait

        path = Path(path).resolve()
        page_url = path.as_uri()
        self._reset_tab()
        self._driver.get(page_url)
        try:
            WebDriverWait(self._driver, image_timeout, poll_frequency=0.05).until(
                lambda driver: driver.execute_script(_IMAGES_SETTLED_SCRIPT)
            )
        except TimeoutException:
            pass  # the images still loading are reported with complete=False
        executed_scripts = self._take_executed_scripts()
        state = self._driver.execute_script(_PAGE_STATE_SCRIPT, list(URL_ATTRIBUTES))
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        if not self._driver.save_screenshot(str(screenshot)):
            raise OSError(f"Chromium could not write the screenshot {screenshot}")
        return PageInspection(
            page_url=page_url,
            source_title=_source_title(path),
            title=state["title"],
            console_errors=self._take_console_errors(),
            requested_urls=self._take_requested_urls(),
            images=tuple(
                ImageState(
                    source=image["source"][:SOURCE_PREVIEW_LENGTH],
                    natural_width=int(image["naturalWidth"]),
                    natural_height=int(image["naturalHeight"]),
                    complete=bool(image["complete"]),
                )
                for image in state["images"]
            ),
            inline_svgs=tuple(
                InlineSvg(width=float(svg["width"]), height=float(svg["height"])) for svg in state["svgs"]
            ),
            headings=tuple(Heading(level=int(heading["level"]), text=heading["text"]) for heading in state["headings"]),
            executed_scripts=executed_scripts,
            script_element_count=int(state["scriptElements"]),
            event_handler_element_count=int(state["eventHandlerElements"]),
            javascript_url_count=int(state["javascriptUrls"]),
            screenshot=screenshot,
        )

    def layout(self, path: Path, *, screenshots: Path, name: str) -> PageLayout:
        """Load a local HTML file in a 1280 x :data:`ABOVE_THE_FOLD` window and record where everything is.

        Parameters
        ----------
        path : pathlib.Path
            The HTML file.
        screenshots : pathlib.Path
            The folder of the screenshots (created): ``{name}_top.png`` (the first :data:`ABOVE_THE_FOLD` px of
            the page, 1280 px wide) and ``{name}_full.png`` (the whole page, at half scale, at most 16,000 px tall).
        name : str
            The screenshots' stem.

        Returns
        -------
        PageLayout
        """
        import base64

        path = Path(path).resolve()
        self._reset_tab()
        try:
            self._driver.set_window_size(WINDOW_SIZE[0], ABOVE_THE_FOLD)
            self._driver.get(path.as_uri())
            state = self._driver.execute_script(_LAYOUT_SCRIPT)
            screenshots.mkdir(parents=True, exist_ok=True)
            top, full = screenshots / f"{name}_top.png", screenshots / f"{name}_full.png"
            for target, height, scale in ((top, ABOVE_THE_FOLD, 1.0), (full, int(state["pageHeight"]), 0.5)):
                clip = {"x": 0, "y": 0, "width": WINDOW_SIZE[0], "height": min(height, 16_000), "scale": scale}
                shot = self._driver.execute_cdp_cmd(
                    "Page.captureScreenshot", {"captureBeyondViewport": True, "clip": clip}
                )
                target.write_bytes(base64.b64decode(shot["data"]))
        finally:
            self._driver.set_window_size(*WINDOW_SIZE)
        return PageLayout(
            viewport_width=int(state["viewportWidth"]),
            scroll_width=int(state["scrollWidth"]),
            content_width=float(state["contentWidth"]),
            page_height=int(state["pageHeight"]),
            images=tuple(
                PlacedImage(Box(**image["box"]), int(image["naturalWidth"]), int(image["naturalHeight"]), image["alt"])
                for image in state["images"]
            ),
            blocks=tuple(
                PlacedBlock(block["section"], block["tag"], block["cls"], block["text"], Box(**block["box"]))
                for block in state["blocks"]
            ),
            screenshot_top=top,
            screenshot_full=full,
        )

    def close(self) -> None:
        """Quit Chromium and chromedriver and remove the temporary profile."""
        try:
            self._driver.quit()
        finally:
            if self._profile_directory is not None:
                self._profile_directory.cleanup()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _reset_tab(self) -> None:
        """Leave the current page for ``about:blank`` and discard every log entry and coverage count so far."""
        self._driver.get("about:blank")
        self._driver.get_log("browser")
        self._driver.get_log("performance")
        self._driver.execute_cdp_cmd("Profiler.takePreciseCoverage", {})

    def _take_executed_scripts(self) -> tuple[ExecutedScript, ...]:
        """Page functions called since the last reset; chromedriver's own helpers have no URL and are left out."""
        coverage = self._driver.execute_cdp_cmd("Profiler.takePreciseCoverage", {})["result"]
        executed = []
        for script in coverage:
            called = tuple(
                function["functionName"]
                for function in script["functions"]
                if function["ranges"] and function["ranges"][0]["count"] > 0
            )
            if script["url"] and called:
                executed.append(ExecutedScript(url=script["url"], function_names=called))
        return tuple(executed)

    def _take_console_errors(self) -> tuple[str, ...]:
        return tuple(entry["message"] for entry in self._driver.get_log("browser") if entry["level"] == "SEVERE")

    def _take_requested_urls(self) -> tuple[str, ...]:
        urls = []
        for entry in self._driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                url = message["params"]["request"]["url"]
                if not url.startswith("data:"):
                    urls.append(url)
        return tuple(urls)


def inspect_page(path: Path, *, screenshot: Path) -> PageInspection:
    """Inspect one page in a browser of its own (prefer the session fixture ``browser`` in tests).

    Parameters
    ----------
    path : pathlib.Path
        The HTML file.
    screenshot : pathlib.Path
        Where to save the PNG of the top of the page.

    Returns
    -------
    PageInspection
    """
    with BrowserInspector.start() as inspector:
        return inspector.inspect(path, screenshot=screenshot)


class _TitleParser(HTMLParser):
    """Collect the text of the first ``<title>`` element, the way the HTML parser sees it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: str | None = None
        self._inside_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and self.title is None:
            self._inside_title, self.title = True, ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._inside_title = False

    def handle_data(self, data: str) -> None:
        if self._inside_title:
            self.title = (self.title or "") + data


def _source_title(path: Path) -> str | None:
    parser = _TitleParser()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    return None if parser.title is None else _normalize_space(parser.title)


def _normalize_space(text: str) -> str:
    return " ".join(text.split())


def _first_on_path(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found is not None:
            return found
    return None


def _major_version(version_line: str) -> str:
    match = re.search(r"(\d+)\.", version_line)
    return match.group(1) if match else version_line
