"""The built site in a real browser: Debian's headless Chromium (never a downloaded one), driven
by selenium, renders the home page, a guide, a reference page and a results page from a server
on 127.0.0.1, and each shows its content: a heading and text, code blocks highlighted, every
image loaded (``naturalWidth > 0``; the results page has plots), no error in the console; and
the search box finds pages. ``.ci/install_docs.sh`` installs the browser on a bare machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from site_server import serve

pytestmark = pytest.mark.docs

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1280,900")
#: page -> (what its text must hold, it must show highlighted code, it must show plots)
PAGES = {
    "": ("Universal Byte-Pair Encoding", True, False),
    "guides/fit/": ("Fit any sequence", True, False),
    "reference/api/ubpe/": ("ubpe.UBPE", False, False),
    "results/default/": ("Experiment default", False, True),
}
#: the longest a page's script, a search or the browser's start may take before the test gives up
WAIT_SECONDS = 30
MIN_TEXT = 200  # characters of text a page with content shows at least


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver", reason="the [docs] extra")
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed (.ci/install_docs.sh)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(WAIT_SECONDS)
    yield driver
    driver.quit()


def problems(driver, url: str, text: str, code: bool, plots: bool) -> list[str]:
    """What is wrong with the page at ``url`` as the browser shows it (empty: nothing)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: d.execute_script("return document.readyState") == "complete")
    found = []
    article = driver.execute_script("const a = document.querySelector('article'); return a ? a.innerText : ''")
    if len(article.strip()) < MIN_TEXT:
        found.append(f"{url}: blank ({len(article.strip())} characters of text)")
    if text not in article:
        found.append(f"{url}: does not show {text!r}")
    if not driver.execute_script("return document.querySelector('article h1') !== null"):
        found.append(f"{url}: no heading")
    images = driver.execute_script(
        "return Array.from(document.querySelectorAll('article img')).map(i => [i.src, i.complete, i.naturalWidth])")
    found += [f"{url}: image not loaded: {src}" for src, complete, width in images if not (complete and width > 0)]
    if plots and not images:
        found.append(f"{url}: no plots")
    if code:
        blocks = driver.execute_script(
            "return Array.from(document.querySelectorAll('article .highlight pre code'))"
            ".map(c => [c.innerText.length, c.querySelectorAll('span').length])")
        # every block shows its text; the code ones (not the output blocks) are highlighted
        if not blocks or any(length == 0 for length, _ in blocks) or not any(spans for _, spans in blocks):
            found.append(f"{url}: code blocks missing, empty or not highlighted: {blocks}")
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    found += [f"{url}: console error: {message}" for message in errors]
    return found


def search_results(driver, site_url: str, query: str) -> list[str]:
    """The titles the search box lists for ``query``, typed as a reader types it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(site_url)
    box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
    driver.find_element(By.CSS_SELECTOR, "label.md-search__icon, .md-search__input").click()
    box.send_keys(query)
    WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))
    return [item.text for item in driver.find_elements(By.CSS_SELECTOR, ".md-search-result__item")]


def test_pages_render_their_content_code_and_plots(browser, site_url):
    found = []
    for page, (text, code, plots) in PAGES.items():
        found += problems(browser, site_url + page, text, code, plots)
    assert found == []


def test_the_search_box_finds_pages(browser, site_url):
    results = search_results(browser, site_url, "sentencepiece")
    assert results and any("sentencepiece" in result.lower() for result in results)


def test_a_blank_page_and_a_missing_plot_are_caught(browser, built_site, tmp_path):
    """The checks can fail: in a copy of the site, the results page's plots removed and the
    guide emptied."""
    broken = tmp_path / "site"
    shutil.copytree(built_site, broken)
    for plot in (broken / "results" / "default").glob("*.png"):
        plot.unlink()
    (broken / "guides" / "fit" / "index.html").write_text("<html><body></body></html>")
    server = serve(broken)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        results = problems(browser, url + "results/default/", "Experiment default", False, True)
        guide = problems(browser, url + "guides/fit/", "Fit any sequence", True, False)
    finally:
        server.shutdown()
        server.server_close()
    assert any("image not loaded" in problem for problem in results)
    assert any("blank" in problem for problem in guide) and any("not highlighted" in problem for problem in guide)
