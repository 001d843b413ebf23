"""The web client in Firefox (Debian's firefox-esr, through Marionette: see
firefox.py), through nginx, our server and MariaDB: a smaller journey than
test_web.py's in Chromium, for the second browser engine. The stream loads,
a person registers, posts a photo and sees it in the grid, comments on it in
two lines (Shift+Enter, then Enter sends); new photos come by the live stream
here too."""
from __future__ import annotations


import pytest

from browser import DESKTOP, comment_in_two_lines, log_in, open_newest, post_photo, shown_comment_lines, tiles, updates, wait_for
from firefox import Firefox

pytestmark = pytest.mark.usefixtures("fresh_db")


@pytest.fixture(scope="module")
def firefox():
    driver = Firefox(*DESKTOP)
    yield driver
    driver.quit()


def test_the_journey_in_firefox(web_site, firefox, client, images, tmp_path):
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(images.photo)
    poster = client()
    assert "result" in poster.register("foxposter", "pw").json()
    assert poster.upload(images.photo, title="Already there").json() == {"successful": 1}

    firefox.get(web_site)
    wait_for(lambda: tiles(firefox) == ["Already there"], what="the stream")
    wait_for(lambda: updates(firefox) == "live", what="the live stream's subscription")
    log_in(firefox, web_site, "foxwalker", "s3cret-pass", register=True)
    post_photo(firefox, photo, "By fox")
    assert tiles(firefox) == ["By fox", "Already there"]
    # Open it and comment in two lines from the keyboard (Firefox's own key events).
    open_newest(firefox)
    wait_for(lambda: firefox.find_element("id", "comment-form").is_displayed(), what="the comment form")
    comment_in_two_lines(firefox, "Foxes", "at night")
    lines = wait_for(lambda: shown_comment_lines(firefox, "Foxes\nat night"), what="the comment")
    assert len(lines) == 2, lines
    firefox.execute_script("document.getElementById('viewer-close').click()")
    # Someone else posts: it appears by itself, once.
    assert poster.upload(images.photo, title="Seen live").json() == {"successful": 1}
    wait_for(lambda: tiles(firefox) == ["Seen live", "By fox", "Already there"], timeout=15,
             what="the other person's photo")
