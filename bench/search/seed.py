#!/usr/bin/env python3
"""seed.py PHOTOS - SQL for the search benchmark (into empty tables): 1000 users and PHOTOS
photos with titles of 2 to 5 words in English, French, German, Spanish,
Russian, Japanese and Chinese (plus years and emoji), the earlier words of
each list far more common (a word's pick is rand()^2 over its list), as real
titles are. Written for the mariadb client with latin1 as its charset (the
UTF-8 bytes are stored as the app stores them). Deterministic (RAND(seed))."""
import sys

PHOTOS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
LISTS = [
    # English
    "sunset beach city night morning street park river harbour mountain lake forest sky cloud rain snow "
    "bridge tower market garden festival train station coffee dog cat friends family party wedding concert "
    "sunrise island castle museum road car boat food dinner breakfast flowers tree autumn winter summer spring",
    # French / German / Spanish
    "café plage soleil été hiver montagne église rivière marché château fête gâteau élève forêt "
    "straße brücke größe märchen schön bäckerei fluss wald see himmel über "
    "playa montaña ciudad niño mañana año corazón jardín fiesta calle",
    # places
    "paris london berlin tokyo madrid rome lisbon oslo vienna prague dublin athens cairo lima quito seoul "
    "hanoi zürich münchen kraków québec são_paulo reykjavík",
    # Russian, Japanese, Chinese, names
    "москва закат город ночь море река лес 東京 京都 大阪 夕焼け 桜 花火 富士山 北京 上海 长城 日落 海滩 "
    "zoë zoe chloé anaïs müller josé søren åsa",
    # years, emoji
    "2012 2013 2015 2019 2020 2024 🌅 🎉 ❤️ 🐶",
]
LISTS = [l.split() for l in LISTS]


def quote(word: str) -> str:
    return "'" + word.replace("_", " ").replace("'", "''") + "'"


def pick(list_index: int, salt: int) -> str:
    words = LISTS[list_index]
    return (f"ELT(1 + FLOOR(POW(RAND(seq * {salt} + {list_index}), 2) * {len(words)}), "
            + ", ".join(quote(w) for w in words) + ")")


print("INSERT INTO login (username, pass) SELECT CONCAT('user', seq), 'x' FROM seq_1_to_1000;")
parts = [pick(0, 7), pick(1, 11), pick(2, 13), pick(3, 17), pick(4, 19)]
# 2-5 words: which of the lists a title draws from depends on the row.
title = ("CONCAT_WS(' ', " + parts[0] + ", IF(seq % 3 = 0, " + parts[1] + ", NULL), "
         + "IF(seq % 2 = 0, " + parts[2] + ", NULL), IF(seq % 5 < 2, " + parts[3] + ", NULL), "
         + "IF(seq % 7 = 0, " + parts[4] + ", NULL))")
print(f"INSERT INTO photos (title, IdUser) SELECT LEFT({title}, 100), 1 + seq % 1000 FROM seq_1_to_{PHOTOS};")
# One upload a minute from 2010-01-01 (the Flickr search by upload date).
print("INSERT INTO photo_details (IdPhoto, created, width, height) "
      "SELECT IdPhoto, 1262304000 + 60 * (IdPhoto - 2), 1024, 768 FROM photos;")
