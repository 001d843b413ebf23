// The iReporter app in the browser: the stream, a photo, posting, search,
// a person's photos (follow them), your home (the people you follow), the
// photos you like, your notifications (live), log in / register / log out, the account's settings. Plain ES modules, no
// build step. Everything people typed is shown with textContent, never as
// markup.
import { API_URL, APIError, call, callForImage, upload, rows } from './api.js';
import { showPicture } from './sizes.js';
import { downscaled, squarePreview } from './images.js';
import { follow } from './live.js';
import { sharedEventSource, spread } from './shared-source.js';
import { appPassword } from './password.js';

const $ = (id) => document.getElementById(id);
const PAGE = 50;

const state = {
  user: loadUser(),
  features: { extras: false, sizes: false, search: false, graph: null, liked: false, effects: [] }, // graph: null until known
  view: { kind: 'stream' },   // stream | home | liked | user | search | notifications | settings
  photos: [],                 // what the grid shows, newest first
  current: null,              // the photo open in the view
  unfollow: null,             // stops the stream's live updates
  shown: 0,                   // counts the pages drawn: an answer for one no longer shown is dropped
  loadingOlder: false,        // one older page at a time
  alerts: { stop: null, recount: null, unread: 0, seen: 0 }, // the live notifications: how to stop them and ask again, how many unseen, times seen
};

// ---------------------------------------------------------------- account --

function loadUser() {
  try { return JSON.parse(localStorage.getItem('ireporter.user')); } catch { return null; }
}

function setUser(user) {
  state.user = user;
  if (user) localStorage.setItem('ireporter.user', JSON.stringify(user));
  else localStorage.removeItem('ireporter.user');
  renderAccount();
  listenForNotifications();
}

/**
 * Another tab of this browser signed in, out, or as someone else: the
 * session cookie is one for every tab, so this one follows at once (it
 * would otherwise show one person while the server acts for another).
 */
function followOtherTabs(event) {
  if (state.user && event.key === seenKey()) {
    // Read in another tab: the count here is out of date too.
    state.alerts.seen += 1;
    state.alerts.recount?.();
    return;
  }
  if (event.key !== 'ireporter.user') return;
  const user = loadUser();
  if ((user?.IdUser ?? null) === (state.user?.IdUser ?? null)) return;
  for (const dialog of document.querySelectorAll('dialog[open]')) dialog.close();
  state.user = user;
  renderAccount();
  listenForNotifications();
  closeViewer();
  route();
}

function renderAccount() {
  const nav = $('account');
  nav.replaceChildren();
  // Password managers save a changed password under the account these name.
  for (const field of document.querySelectorAll('.account-name')) field.defaultValue = state.user?.username ?? '';
  if (state.user) {
    const me = document.createElement('a');
    me.href = `#/user/${encodeURIComponent(state.user.IdUser)}`;
    me.textContent = state.user.username;
    me.className = 'me';
    me.title = state.user.username;
    const post = button('Post', () => openPost());
    post.className = 'primary';
    const settings = document.createElement('a');
    settings.href = '#/settings';
    settings.textContent = 'Settings';
    nav.append(me, post, settings, button('Log out', logout));
  } else {
    nav.append(button('Log in', () => openLogin()));
  }
  renderViews();
}

/**
 * Home and Notifications are a signed-in person's, where the server has
 * follows (taken for granted until known otherwise: the bar keeps its
 * layout as the page starts); Liked too, once the server is known to list
 * them; Explore is everyone's.
 */
function renderViews() {
  $('home-link').hidden = !state.user || state.features.graph === false;
  $('liked-link').hidden = !state.user || !state.features.liked;
  $('notifications-item').hidden = !state.user || state.features.graph === false;
  const current = { home: 'home-link', liked: 'liked-link', stream: 'explore-link', notifications: 'notifications-link' }[state.view.kind];
  for (const id of ['home-link', 'liked-link', 'explore-link', 'notifications-link']) {
    if (id === current) $(id).setAttribute('aria-current', 'page'); else $(id).removeAttribute('aria-current');
  }
}

function button(label, onClick) {
  const element = document.createElement('button');
  element.type = 'button';
  element.textContent = label;
  element.addEventListener('click', onClick);
  return element;
}

/** The server's answer to a request whose session is gone. */
const sessionLost = (failure) => failure instanceof APIError && failure.message === 'Authorization required';

/** A lost session sends the person to log in, over whatever they were doing. */
function offerLoginIfSessionLost(failure) {
  if (!sessionLost(failure)) return;
  setUser(null);
  openLogin();
}

/** A command that needs a session: a lost session sends the person to log in. */
async function signedIn(command, fields) {
  try {
    return await call(command, fields);
  } catch (error) {
    offerLoginIfSessionLost(error);
    throw error;
  }
}

/** What the person was doing when the login was asked for: done once signed in (forgotten if the dialog is closed). */
let afterLogin = null;

function openLogin(then = null) {
  afterLogin = then;
  $('login-error').hidden = true;
  $('login-dialog').showModal();
  $('login-username').focus();
}

async function submitLogin(event) {
  event.preventDefault();
  const command = event.submitter && event.submitter.value === 'register' ? 'register' : 'login';
  const error = $('login-error');
  error.hidden = true;
  try {
    const username = $('login-username').value;
    const typed = $('login-password').value;
    if (command === 'register' && utf8Bytes(username) > USERNAME_BYTES) {
      throw new APIError(`Usernames are at most ${USERNAME_BYTES} bytes, and this one has ${utf8Bytes(username)} `
                         + '(an accented letter takes two).');
    }
    const answer = await (command === 'login' ? logIn(username, typed) : call(command, { username, password: appPassword(typed) }));
    const [user] = rows(answer);
    if (!user) throw new APIError('The server did not confirm the login.');
    // A name stored as no UTF-8 by the PHP era is null in the answer: the one typed.
    setUser({ IdUser: String(user.IdUser), username: String(user.username ?? username) });
    $('login-password').value = '';
    const then = afterLogin;
    $('login-dialog').close();
    // The Log in button it would go back to is gone: the person's name, where Log out is too.
    document.querySelector('#account a')?.focus();
    // Signed in over a post whose previews met the lost session: they come now.
    if ($('post-dialog').open) { $('post-error').hidden = true; renderPreviews(post.photos); return; }
    // Before the view is drawn again: the photo's counts are then asked for with the vote in them.
    await then?.();
    route(); // the view (and a photo open) drawn again for the person now signed in
  } catch (failure) {
    showError(error, failure);
  }
}

/**
 * Logs in with the app's value, as the app does. An account this page made
 * before it sent that value holds a hash of the typed password: when the
 * app's value is refused, the same attempt is sent once more with the typed
 * password beside it (`legacy_password`), and the server then keeps the
 * app's value instead (docs/COMPATIBILITY.md says until when).
 */
async function logIn(username, typed) {
  const password = appPassword(typed);
  try {
    return await call('login', { username, password });
  } catch (failure) {
    if (!(failure instanceof APIError) || failure.message !== 'Authorization failed') throw failure;
    return call('login', { username, password, legacy_password: typed });
  }
}

async function logout() {
  try {
    await call('logout');
  } catch {
    // Not sent (offline) or not done (the service unavailable): the session would live on behind a page that says signed out.
    notify('You are still logged in: the server could not log you out. Try again.');
    return;
  }
  setUser(null);
  closeViewer();
  // Home, Liked, Notifications and Settings are a signed-in person's: Explore.
  history.replaceState(null, '', '#/');
  route();
  document.querySelector('#account button')?.focus(); // Log in, where Log out was
}

function showError(element, failure) {
  element.textContent = failure instanceof APIError ? failure.message : 'Something went wrong. Try again.';
  element.hidden = false;
}

function notify(text) {
  const notice = $('notice');
  notice.textContent = text;
  notice.hidden = !text;
}

// ----------------------------------------------------------------- photos --

/** Fields that ask for the counts, and the names of the photo's sizes, where the server offers them. */
function extras() {
  if (!state.features.extras) return undefined;
  return state.features.sizes ? 'likes,dislikes,comments,myvote,width,height,secret,server' : 'likes,dislikes,comments,myvote';
}

/** One photo as the stream shows it, with the extras the server has; undefined when it is gone. */
async function fetchPhoto(id) {
  const [photo] = rows(await call('stream', { IdPhoto: id, extras: extras() }));
  return photo;
}

async function fetchPage(before) {
  const view = state.view;
  const paging = state.features.extras ? { count: PAGE, before } : {};
  if (view.kind === 'search') return rows(await call('search', { q: view.query, extras: extras(), ...paging }));
  if (view.kind === 'home') return rows(await signedIn('feed', { extras: extras(), ...paging }));
  if (view.kind === 'liked') return rows(await signedIn('liked', { extras: extras(), ...paging }));
  if (view.kind === 'user') {
    const photos = rows(await call('stream', { IdUser: view.userID, extras: extras(), ...paging }));
    // The original has no IdUser (it answers the newest 50 of everyone): theirs among them.
    return state.features.extras ? photos : photos.filter((photo) => String(photo.IdUser) === String(view.userID));
  }
  return rows(await call('stream', { extras: extras(), ...paging }));
}

async function refresh() {
  unfollow();
  notify('');
  const shown = ++state.shown;
  state.loadingOlder = false;
  try {
    const photos = await fetchPage();
    if (shown !== state.shown) return;
    state.photos = photos;
    renderPhotos();
    $('more').hidden = !state.features.extras || state.photos.length < PAGE;
  } catch (failure) {
    if (shown !== state.shown) return;
    state.photos = [];
    renderPhotos();
    $('more').hidden = true; // nothing to go on from: the catch-ups bring the newest
    refreshFailure = failure instanceof APIError ? failure.message : 'The photos could not be loaded.';
    notify(refreshFailure);
  }
  if (state.view.kind === 'stream') {
    // How new photos come ('live' or 'polling'): for people curious, and the tests.
    const modeChanged = (mode) => { document.documentElement.dataset.updates = mode; };
    // A message is the 2012 answer (no sizes' names): with sizes, the photo is asked for with them.
    const received = (photos) => (state.features.sizes ? receiveWithSizes(photos) : addNewer(photos));
    state.unfollow = follow({ catchUp, received, modeChanged });
  }
}

/** What the stream's load that failed said (cleared once photos come). */
let refreshFailure = '';

/** What the last older page that failed said (cleared by the next that loads). */
let olderFailure = '';

/** The next older page, once at a time; again while the end of the list is still in sight. */
async function loadOlder() {
  const last = state.photos[state.photos.length - 1];
  if (!last || state.loadingOlder || $('more').hidden) return;
  const shown = state.shown;
  state.loadingOlder = true;
  $('more-button').disabled = true;
  try {
    const older = await fetchPage(last.IdPhoto);
    if (shown !== state.shown) return;
    state.photos.push(...older);
    appendPhotos(older);
    if (state.current) renderSteps();
    $('more').hidden = older.length < PAGE;
    renderStats();
    if (olderFailure && $('notice').textContent === olderFailure) notify('');
    olderFailure = '';
  } catch (failure) {
    if (shown !== state.shown) return;
    olderFailure = failure instanceof APIError ? failure.message : 'Older photos could not be loaded.';
    notify(olderFailure);
    return;
  } finally {
    if (shown === state.shown) state.loadingOlder = false;
    $('more-button').disabled = false;
  }
  if (endInSight()) loadOlder();
}

/** Older pages load this far (in pixels) before the end of the list comes into view. */
const SCROLL_AHEAD = 800;

function endInSight() {
  const more = $('more');
  return !more.hidden && more.getBoundingClientRect().top < innerHeight + SCROLL_AHEAD;
}

function renderPhotos() {
  const search = state.view.kind === 'search';
  $('grid').hidden = search;
  $('results').hidden = !search;
  $('grid').replaceChildren();
  $('results').replaceChildren();
  appendPhotos(state.photos);
  if (state.photos.length === 0) notify(search ? 'No photos match.' : 'No photos yet.');
}

function appendPhotos(photos) {
  const list = state.view.kind === 'search' ? $('results') : $('grid');
  // The first rows load at once (the largest paint); the rest when scrolled near.
  const eager = Math.max(0, 12 - list.childElementCount);
  const place = state.view.kind === 'search' ? 'result' : 'tile';
  list.append(...photos.map((photo, index) => photoItem(photo, place, index < eager)));
}

function photoItem(photo, place, eager) {
  const item = document.createElement('li');
  const link = document.createElement('a');
  link.href = `#/photo/${encodeURIComponent(photo.IdPhoto)}`;
  link.className = 'tile';
  link.dataset.id = photo.IdPhoto;
  const image = document.createElement('img');
  // A photo whose file is gone (its size answers 404): a placeholder of the same box.
  image.addEventListener('error', () => image.replaceWith(unavailablePicture(photo)), { once: true });
  showPicture(image, photo, place);
  image.alt = ''; // the caption names the link: read once
  image.width = 180;
  image.height = 180;
  image.loading = eager ? 'eager' : 'lazy';
  image.decoding = 'async';
  const caption = document.createElement('span');
  caption.className = 'caption';
  const title = document.createElement('span');
  title.className = 'title';
  title.dir = 'auto'; // a right-to-left title keeps its start when cut
  title.textContent = photo.title ?? '';
  const author = document.createElement('span');
  author.className = 'author';
  author.textContent = photo.username ?? '';
  caption.append(title, author);
  link.append(image, caption);
  item.append(link);
  return item;
}

/** What a tile shows in place of a picture that cannot be loaded: the same box, said in words. */
function unavailablePicture(photo) {
  const placeholder = document.createElement('span');
  placeholder.className = 'unavailable';
  placeholder.setAttribute('role', 'img');
  placeholder.setAttribute('aria-label', photo.title ? `Photo unavailable: ${photo.title}` : 'Photo unavailable');
  const text = document.createElement('span');
  text.setAttribute('aria-hidden', 'true');
  text.textContent = 'Photo unavailable';
  placeholder.append(text);
  return placeholder;
}

// ---------------------------------------------------- the stream refreshes --

function unfollow() {
  if (state.unfollow) state.unfollow();
  state.unfollow = null;
}

/** Shows what is newer than the newest photo shown. */
async function catchUp() {
  const newest = state.photos[0] ? Number(state.photos[0].IdPhoto) : 0;
  const answer = state.features.extras
    ? await call('stream', { since: newest || undefined, extras: extras() })
    : await call('stream'); // the original has no `since`: its newest 50
  addNewer(rows(answer).filter((photo) => Number(photo.IdPhoto) > newest));
}

/**
 * The photos a live message announced, each asked for by its id with its
 * sizes' names: a catch-up from the newest shown would miss a photo
 * committed after a newer one (ids are given before the commit).
 */
async function receiveWithSizes(photos) {
  for (const photo of photos) {
    try {
      const full = await fetchPhoto(photo.IdPhoto);
      if (full) addNewer([full]);
    } catch {
      catchUp().catch(() => { /* the next message or reconnection brings it */ });
    }
  }
}

/**
 * New photos into the grid at their place, newest first, each once (a
 * photo may come both by a message and by a catch-up; photos committed
 * out of order arrive out of order).
 */
function addNewer(photos) {
  if (state.view.kind !== 'stream') return;
  const grid = $('grid');
  let added = false;
  for (const photo of photos) {
    const id = Number(photo.IdPhoto);
    if (state.photos.some((shown) => Number(shown.IdPhoto) === id)) continue;
    let at = state.photos.findIndex((shown) => Number(shown.IdPhoto) < id);
    if (at < 0) {
      if (!$('more').hidden) continue; // older than the pages loaded: `before` brings it
      at = state.photos.length;
    }
    state.photos.splice(at, 0, photo);
    grid.insertBefore(photoItem(photo, 'tile', true), grid.children[at] ?? null);
    added = true;
  }
  if (!added) return;
  if ([refreshFailure, 'No photos yet.'].includes($('notice').textContent)) notify('');
  if (state.current) renderSteps();
}

// ------------------------------------------------------------- one photo --

/** Photos asked to open so far: an answer for one asked before the last comes too late. */
let photoOpenings = 0;

/** `overView`: the view whose link opened it, marked on its entry once it is shown (`leavePhoto`). */
async function openPhoto(id, overView = null) {
  const opening = ++photoOpenings;
  let photo = state.photos.find((shown) => String(shown.IdPhoto) === String(id));
  const listed = Boolean(photo);
  if (!listed) {
    // A link to a photo not on the pages loaded: shown on its own (no stepping).
    let failure = null;
    try {
      photo = await fetchPhoto(id);
    } catch (error) {
      failure = error;
    }
    if (opening !== photoOpenings) return;
    if (failure || !photo) {
      closeViewer(); // another photo shown would stand under this one's address
      if (location.hash.startsWith('#/photo/')) history.replaceState(null, '', backHash()); // the view, where it was asked from
      notify(failure instanceof APIError ? failure.message : failure ? 'The photo could not be loaded.' : 'That photo is not there any more.');
      return;
    }
  }
  // A comment half typed was for the photo it was typed under.
  if (String(state.current?.IdPhoto) !== String(photo.IdPhoto)) $('comment-text').value = '';
  state.current = photo;
  $('viewer-error').hidden = true;
  showPicture($('viewer-image'), photo, 'viewer');
  $('viewer-image').alt = photo.title ?? '';
  $('viewer-title').textContent = photo.title ?? '';
  renderDocumentTitle();
  $('viewer-author').textContent = photo.username ?? '';
  $('viewer-author').href = `#/user/${encodeURIComponent(photo.IdUser)}`;
  $('viewer-avatar').textContent = initial(photo.username);
  renderSteps();
  renderVotes(photo);
  $('delete').hidden = !(state.user && String(state.user.IdUser) === String(photo.IdUser) && state.features.extras);
  renderComments(photo);
  const viewer = $('viewer');
  if (viewer.hidden) {
    viewer.hidden = false;
    setPageInert(true);
    document.documentElement.classList.add('viewing');
    viewer.classList.add('opening');
    requestAnimationFrame(() => viewer.classList.remove('opening'));
    openedFrom = document.activeElement;
    if (overView !== null) history.replaceState({ overView }, '');
    $('viewer-close').focus();
  }
  if (listed && state.features.extras) refreshCounts(photo);
}

/**
 * The counts of a photo from the grid may be old: ask again. An answer
 * that comes after a vote was sent may be from before it, and the vote's
 * own answer has the counts: it is dropped.
 */
async function refreshCounts(photo) {
  const votes = votesSent;
  try {
    const fresh = await fetchPhoto(photo.IdPhoto);
    if (!fresh) { forgetDeletedPhoto(photo); return; }
    if (votes !== votesSent) return;
    Object.assign(photo, fresh);
    if (state.current === photo) renderVotes(photo);
  } catch { /* the counts shown stay */ }
}

/** Its owner deleted it after it was drawn: out of the grid, and the view closed with a word. */
function forgetDeletedPhoto(photo) {
  state.photos = state.photos.filter((shown) => shown !== photo);
  document.querySelector(`.tile[data-id="${CSS.escape(String(photo.IdPhoto))}"]`)?.parentElement.remove();
  if (state.current !== photo) return;
  closeViewer();
  notify('That photo is not there any more.');
}

function renderSteps() {
  const index = state.photos.indexOf(state.current);
  const focused = document.activeElement;
  $('viewer-prev').disabled = index <= 0;
  $('viewer-next').disabled = index < 0 || index === state.photos.length - 1;
  // A button that just became disabled would drop the focus to the page.
  if (focused?.disabled) $('viewer-close').focus();
}

/** While the photo is shown (a modal dialog), the page behind takes no focus and is not read. */
function setPageInert(inert) {
  document.querySelector('header.bar').inert = inert;
  $('main').inert = inert;
}

/**
 * A photo's link followed from a view (a click: a new entry in the history,
 * never a Back or Forward onto one): its entry is marked with that view's
 * hash (`history.state.overView`) once the photo opens. Closing a photo
 * whose entry sits on the view shown goes back to that entry, so that the
 * next Back leaves the view instead of landing where it already is; any
 * other (a link from elsewhere, a Back onto the photo) is replaced by the view.
 */
let linkFollowedFrom = null;

/** A Back asked for by closing, not yet arrived (a second click of × waits for it). */
let leaving = false;

/** What had the focus when the photo opened (a tile, a notification's link). */
let openedFrom = null;

/** The ×, Escape: the photo closed as Back would close it. */
function leavePhoto() {
  if (leaving) return;
  if (location.hash.startsWith('#/photo/') && history.state?.overView === backHash()) {
    leaving = true;
    history.back();
  } else {
    closeViewer();
  }
}

function closeViewer() {
  if ($('viewer').hidden) return;
  $('viewer').hidden = true;
  setPageInert(false);
  document.documentElement.classList.remove('viewing');
  const id = state.current?.IdPhoto;
  state.current = null;
  renderDocumentTitle();
  if (location.hash.startsWith('#/photo/')) history.replaceState(null, '', backHash());
  // Its tile; or (opened from a notification, or deleted) what opened it; or the view's heading.
  const opener = openedFrom?.isConnected && openedFrom !== document.body ? openedFrom : null;
  const tile = document.querySelector(`.tile[data-id="${CSS.escape(String(id))}"]`);
  const shown = tile?.getClientRects().length ? tile : null; // the grid of another view stays, hidden
  (shown ?? opener ?? $('heading')).focus();
}

/** The tab's title says what is shown: the photo open, or the view's heading (history and tab lists, screen readers). */
function renderDocumentTitle() {
  const shown = state.current ? (state.current.title || 'Photo') : $('heading').textContent;
  document.title = shown ? `${shown} · iReporter` : 'iReporter';
}

function backHash() {
  const view = state.view;
  if (view.kind === 'search') return `#/search/${encodeURIComponent(view.query)}`;
  if (view.kind === 'user') return `#/user/${encodeURIComponent(view.userID)}`;
  if (['home', 'liked', 'notifications'].includes(view.kind)) return `#/${view.kind}`;
  return '#/';
}

function step(offset) {
  const index = state.photos.indexOf(state.current);
  const next = index + offset;
  if (index < 0 || next < 0 || next >= state.photos.length) return;
  history.replaceState(history.state, '', `#/photo/${encodeURIComponent(state.photos[next].IdPhoto)}`); // on the same view
  openPhoto(state.photos[next].IdPhoto);
  if (next === state.photos.length - 1) loadOlder(); // stepping on past the last photo loaded
}

function renderVotes(photo) {
  $('votes').hidden = !state.features.extras;
  if (!state.features.extras) return;
  const likes = Number(photo.likes ?? 0);
  const dislikes = Number(photo.dislikes ?? 0);
  $('like-count').textContent = String(likes);
  $('like-unit').textContent = likes === 1 ? ' like' : ' likes';
  $('dislike-count').textContent = String(dislikes);
  $('dislike-unit').textContent = dislikes === 1 ? ' dislike' : ' dislikes';
  $('like').setAttribute('aria-pressed', String(photo.myvote === 'like' || photo.myvote === 1 || photo.myvote === '1'));
  $('dislike').setAttribute('aria-pressed', String(photo.myvote === 'dislike' || photo.myvote === -1 || photo.myvote === '-1'));
}

async function vote(kind) {
  const photo = state.current;
  if (!photo) return;
  // Signed out, the press is a like (or dislike) asked for: sent as one once signed in, never as a take-back.
  if (!state.user) { openLogin(() => sendVote(photo, kind)); return; }
  const pressed = $(kind).getAttribute('aria-pressed') === 'true';
  await sendVote(photo, pressed ? 'unvote' : kind);
}

/** A double tap on the photo likes it (as in the app people know); it never takes a like back. */
function likeByDoubleTap() {
  const photo = state.current;
  if (!photo || !state.features.extras) return;
  if (!state.user) { openLogin(() => sendVote(photo, 'like')); return; }
  if ($('like').getAttribute('aria-pressed') !== 'true') sendVote(photo, 'like');
}

/** The photo whose vote is on its way; how many votes were sent. */
let votingOn = null;
let votesSent = 0;

async function sendVote(photo, command) {
  if (votingOn === photo) return;
  votingOn = photo;
  votesSent += 1;
  try {
    const [counts] = rows(await signedIn(command, { IdPhoto: photo.IdPhoto }));
    if (counts) Object.assign(photo, counts);
    if (state.current === photo) renderVotes(photo);
    $('viewer-error').hidden = true; // an earlier failure is over
  } catch (failure) {
    notifyViewer(failure);
  } finally {
    votingOn = null;
  }
}

/** The app's alert, in the photo's view: the server's own text, announced and shown. */
function notifyViewer(failure) {
  showError($('viewer-error'), failure);
}

async function deletePhoto() {
  const photo = state.current;
  if (!photo || !window.confirm(`Delete “${photo.title ?? ''}”?`)) return;
  try {
    await signedIn('delete', { IdPhoto: photo.IdPhoto });
    state.photos = state.photos.filter((shown) => shown !== photo);
    document.querySelector(`.tile[data-id="${CSS.escape(String(photo.IdPhoto))}"]`)?.parentElement.remove();
    closeViewer();
  } catch (failure) {
    notifyViewer(failure);
  }
}

/** Comment lists asked for so far: only the answer to the last is drawn. */
let commentListings = 0;

async function renderComments(photo) {
  const listing = ++commentListings;
  const section = $('comments');
  section.hidden = !state.features.extras;
  $('comment-form').hidden = !state.user;
  const list = $('comment-list');
  list.replaceChildren();
  if (section.hidden) return;
  try {
    const comments = rows(await call('comments', { IdPhoto: photo.IdPhoto }));
    // Stepped to another photo, or asked again (a comment sent) meanwhile:
    // not its comments, or not all of them.
    if (state.current !== photo || listing !== commentListings) return;
    list.replaceChildren(...comments.map((comment) => commentItem(comment, photo)));
  } catch (failure) {
    if (state.current === photo && listing === commentListings) notifyViewer(failure);
  }
}

function commentItem(comment, photo) {
  const item = document.createElement('li');
  const author = document.createElement('strong');
  author.textContent = comment.username ?? '';
  const text = document.createElement('p');
  text.dir = 'auto';
  text.textContent = comment.text ?? '';
  item.append(author, text);
  const mine = state.user && String(comment.IdUser) === String(state.user.IdUser);
  const onMyPhoto = state.user && String(photo.IdUser) === String(state.user.IdUser);
  if (mine || onMyPhoto) {
    const remove = button('Delete', async () => {
      try {
        await signedIn('uncomment', { IdComment: comment.IdComment });
        item.remove();
        ($('comment-form').hidden ? $('viewer-close') : $('comment-text')).focus(); // not lost with the button
      } catch (failure) {
        notifyViewer(failure);
      }
    });
    // Each named apart, as a list of buttons read out of their places is.
    const excerpt = [...(comment.text ?? '')].slice(0, 40).join('');
    remove.setAttribute('aria-label', `Delete the comment by ${comment.username ?? ''}: ${excerpt}`);
    remove.className = 'plain';
    item.append(remove);
  }
  return item;
}

/**
 * Enter sends the comment, Shift+Enter breaks the line. Not while an input
 * method is composing (Japanese, Chinese, Korean): its Enter chooses the word.
 */
function commentKey(event) {
  if (event.key !== 'Enter' || event.shiftKey || event.isComposing || event.keyCode === 229) return;
  event.preventDefault();
  $('comment-form').requestSubmit();
}

/** A comment on its way: Enter or Send again meanwhile would post it twice. */
let sendingComment = false;

async function submitComment(event) {
  event.preventDefault();
  const photo = state.current;
  const text = $('comment-text').value;
  if (!photo || !text.trim() || sendingComment) return;
  if (utf8Bytes(text) > COMMENT_BYTES) {
    notifyViewer(new APIError(`Comments are kept to ${COMMENT_BYTES} bytes, and this one has ${utf8Bytes(text)} `
                              + '(an accented letter takes two, an emoji four).'));
    return;
  }
  sendingComment = true;
  try {
    await signedIn('comment', { IdPhoto: photo.IdPhoto, text });
    if (state.current !== photo) return; // stepped on meanwhile: what is typed now is another photo's draft
    if ($('comment-text').value === text) $('comment-text').value = '';
    $('viewer-error').hidden = true; // an earlier failure is over
    renderComments(photo);
  } catch (failure) {
    notifyViewer(failure);
  } finally {
    sendingComment = false;
  }
}

// ------------------------------------------------------------ post a photo --

const post = { file: null, sent: null, source: null, rendered: new Map(), chosen: '', photos: 0, sending: null };

/** How often a preview the server was too busy for is asked again, and after how long (ms, growing). */
const BUSY_RETRIES = 5;
const BUSY_WAIT = 300;

function openPost() {
  if (!state.user) { openLogin(openPost); return; }
  $('post-form').reset();
  $('preview').hidden = true;
  $('downscale-row').hidden = true;
  $('post-progress').hidden = true;
  $('post-error').hidden = true;
  $('post-effects').hidden = true;
  $('post-effect-summary').hidden = true;
  forgetPhoto();
  $('post-dialog').showModal();
}

/** Lets go of the photo chosen before: its previews stop, their pictures are freed. */
function forgetPhoto() {
  post.photos += 1;
  post.file = post.sent = post.source = null;
  for (const url of post.rendered.values()) URL.revokeObjectURL(url);
  post.rendered.clear();
  post.chosen = '';
  const image = $('preview-image'); // showed one of those pictures
  image.removeAttribute('src');
  image.dataset.effect = '';
  $('effect-row').replaceChildren();
}

async function choosePhoto() {
  const file = $('post-file').files[0];
  forgetPhoto();
  post.file = file || null;
  $('preview').hidden = true;
  $('post-effects').hidden = true;
  if (!file) return;
  const photo = post.photos;
  const scaled = await downscaled(file);
  if (photo !== post.photos) return;
  post.sent = scaled;
  const row = $('downscale-row');
  row.hidden = !scaled;
  if (scaled) {
    $('post-downscale-label').textContent =
      `Downscale to ${scaled.width} × ${scaled.height} before sending (${kilobytes(scaled.blob.size)} instead of ${kilobytes(file.size)})`;
  }
  const source = await squarePreview(scaled ? scaled.blob : file);
  if (photo !== post.photos) return;
  post.source = source;
  $('post-error').hidden = true;
  if (!source) return; // not an image this browser can read: the server will say why at the upload
  post.rendered.set('', URL.createObjectURL(source));
  buildEffectRow();
  showChosen();
  renderPreviews(photo);
}

function kilobytes(bytes) {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

/** The effects as a row of small squares of this photo, None first; each a radio button named by its effect. */
function buildEffectRow() {
  const effects = state.features.effects;
  $('post-effects').hidden = effects.length === 0;
  if (effects.length === 0) return;
  const choices = [{ effect: '', name: 'None' }, ...effects.map(({ effect }) => ({ effect, name: effect[0].toUpperCase() + effect.slice(1) }))];
  $('effect-row').replaceChildren(...choices.map(({ effect, name }) => {
    const label = document.createElement('label');
    label.className = 'effect';
    label.dataset.effect = effect;
    const radio = document.createElement('input');
    radio.type = 'radio';
    radio.name = 'effect';
    radio.value = effect;
    radio.checked = effect === post.chosen;
    const picture = document.createElement('img');
    picture.alt = '';
    picture.width = picture.height = 72;
    const rendered = post.rendered.get(effect);
    if (rendered) picture.src = rendered; else label.classList.add('pending');
    const text = document.createElement('span');
    text.textContent = name;
    label.append(radio, picture, text);
    return label;
  }));
}

function chooseEffect(event) {
  if (event.target.name !== 'effect') return;
  post.chosen = event.target.value;
  showChosen();
}

/** The chosen effect large (once the server has rendered it), and what it does. */
function showChosen() {
  const effect = post.chosen;
  const summary = $('post-effect-summary');
  summary.textContent = state.features.effects.find((known) => known.effect === effect)?.summary ?? '';
  summary.hidden = !summary.textContent;
  const rendered = post.rendered.get(effect);
  const image = $('preview-image');
  if (rendered) {
    image.src = rendered;
    image.dataset.effect = effect;
  }
  $('preview').hidden = !image.getAttribute('src');
  $('preview').classList.toggle('pending', !rendered);
}

/**
 * The server's own rendering (`preview`, the same code as `upload`) of each
 * effect on the square, one request at a time, the chosen one first: the
 * server decodes a few photos at once and answers "busy" rather than wait
 * (asked again a moment later), and counts previews per hour
 * (preview_rate_limit, 300 by default: a row is 10).
 */
async function renderPreviews(photo) {
  for (;;) {
    const waiting = state.features.effects.map(({ effect }) => effect).filter((effect) => !post.rendered.has(effect));
    if (photo !== post.photos || waiting.length === 0) return;
    const effect = waiting.includes(post.chosen) ? post.chosen : waiting[0];
    let blob;
    try {
      blob = await previewOf(post.source, effect, photo);
    } catch (failure) {
      if (photo !== post.photos) return;
      showError($('post-error'), failure);
      offerLoginIfSessionLost(failure);
      return; // the rest would meet the same answer (the limit, a lost session, or a photo the server refuses)
    }
    if (photo !== post.photos || !blob) return;
    const url = URL.createObjectURL(blob);
    post.rendered.set(effect, url);
    const tile = $('effect-row').querySelector(`.effect[data-effect="${CSS.escape(effect)}"]`);
    if (tile) {
      tile.querySelector('img').src = url;
      tile.classList.remove('pending');
    }
    if (effect === post.chosen) showChosen();
  }
}

async function previewOf(source, effect, photo) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await callForImage('preview', { effect, file: new File([source], 'preview.jpg', { type: 'image/jpeg' }) });
    } catch (failure) {
      const busy = failure instanceof APIError && failure.message.startsWith('The server is busy');
      if (!busy || attempt >= BUSY_RETRIES) throw failure;
    }
    await new Promise((resolve) => { setTimeout(resolve, BUSY_WAIT * (attempt + 1)); });
    if (photo !== post.photos) return null;
  }
}

/** The server's limits are bytes of UTF-8 (an accented letter takes two, an emoji four): said before sending. */
const utf8Bytes = (text) => new TextEncoder().encode(text).length;
const TITLE_BYTES = 100;
const USERNAME_BYTES = 45;
const COMMENT_BYTES = 1000;

async function submitPost(event) {
  event.preventDefault();
  const error = $('post-error');
  error.hidden = true;
  if (!post.file || post.sending) return;
  const title = $('post-title').value;
  if (utf8Bytes(title) > TITLE_BYTES) {
    // The server would keep its first 100 bytes, silently.
    showError(error, new APIError(`Titles are kept to ${TITLE_BYTES} bytes, and this one has ${utf8Bytes(title)} `
                                  + '(an accented letter takes two, an emoji four): shorten it.'));
    $('post-title').setAttribute('aria-invalid', 'true');
    error.scrollIntoView({ block: 'nearest' });
    return;
  }
  $('post-title').removeAttribute('aria-invalid');
  const useScaled = post.sent && $('post-downscale').checked;
  const file = useScaled ? new File([post.sent.blob], 'photo.jpg', { type: 'image/jpeg' }) : post.file;
  const progress = $('post-progress');
  progress.hidden = false;
  progress.value = 0;
  // Said, not disabled: a disabled button drops the focus.
  $('upload-button').setAttribute('aria-disabled', 'true');
  const sending = new AbortController();
  post.sending = sending;
  try {
    await upload({ title, effect: post.chosen || undefined, file },
                 (fraction) => { progress.value = Math.round(fraction * 100); progress.textContent = `${progress.value}%`; },
                 sending.signal);
    post.sending = null;
    $('post-dialog').close();
    // On the stream already: the new photo joins the tiles shown (no redraw,
    // the place and focus kept); from elsewhere, the route draws the stream.
    if (state.view.kind === 'stream' && !location.hash.startsWith('#/photo/')) await catchUp().catch(() => notify('The photos could not be loaded.'));
    else location.hash = '#/';
  } catch (failure) {
    if (failure.name === 'AbortError') return; // cancelled: the dialog is closed already
    showError(error, failure);
    // Over the post, whose photo and title stay: Upload again once signed in.
    offerLoginIfSessionLost(failure);
  } finally {
    if (post.sending === sending) post.sending = null;
    $('upload-button').removeAttribute('aria-disabled');
  }
}

// ---------------------------------------------------------- notifications --

/** The newest notification seen, per person (the count is of those after it). */
const seenKey = () => `ireporter.seen.${state.user?.IdUser}`;

/**
 * The newest notification seen: the server's read marker, the same for
 * every app and device of the person (`markers`), else (a server without
 * them, or none marked yet) this browser's.
 */
async function lastSeen() {
  try {
    const [marker] = rows(await call('markers', { timelines: 'notifications' }));
    if (marker) return Math.max(Number(marker.last_read_id) || 0, Number(localStorage.getItem(seenKey())) || 0);
  } catch { /* the original has no markers */ }
  return Number(localStorage.getItem(seenKey())) || 0;
}

/**
 * Keeps the unread count: those since the newest seen, asked again on each
 * one the live channel brings (nginx's Nchan: `notification_channel` names
 * it). Where there is none, or it cannot be had (refused: a full
 * `limit_conn`; the server down), asked every 30 s, and the channel asked
 * for again each time it could not be had.
 */
async function listenForNotifications() {
  state.alerts.stop?.();
  state.alerts.stop = null;
  state.alerts.recount = null;
  setUnread(0);
  if (!state.user || !state.features.graph) return;
  const user = state.user;
  let stopped = false;
  let source = null;
  let timer = 0;
  state.alerts.stop = () => { stopped = true; source?.close(); clearTimeout(timer); };
  // One question out at a time, asked again when news came meanwhile: the
  // number shown is an answer given after the newest message. (An answer to
  // a question asked before a comment's commit, arriving after its message,
  // took the message back; one asked after it counted it twice.)
  let asking = null;
  let again = false;
  const count = () => {
    again = true;
    asking ??= (async () => {
      try {
        while (again && !stopped) {
          again = false;
          const seen = state.alerts.seen;
          const since = await lastSeen();
          const unseen = rows(await call('notifications', { since: since || undefined, count: 100 }));
          if (!stopped && !again && seen === state.alerts.seen) setUnread(unseen.length);
        }
      } finally {
        asking = null;
      }
    })();
    return asking;
  };
  state.alerts.recount = () => count().catch(() => {});
  const later = (then) => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      await count().catch(() => {});
      if (!stopped) then();
    }, spread(NOTIFICATIONS_POLL_MS));
  };
  const poll = () => later(poll);
  const subscribe = async () => {
    let channel;
    try {
      [channel] = rows(await call('notification_channel'));
    } catch {
      if (!stopped) later(subscribe);
      return;
    }
    if (stopped) return;
    if (!channel || typeof channel.channel !== 'string' || !('EventSource' in window)) {
      poll(); // no live channel here
      return;
    }
    source = sharedEventSource(channel.channel, {
      open: () => count().catch(() => {}),
      message: (data) => {
        let news = [];
        try { news = rows(JSON.parse(data)); } catch { return; }
        if (state.view.kind === 'notifications') {
          addNotifications(news, true);
          markSeen();
        } else {
          setUnread(state.alerts.unread + news.length); // at once; the answer below corrects it
          count().catch(() => {});
        }
      },
      // A dropped connection is taken up again (then `open`); an answer
      // that is not a stream (429, 502) closes it for good.
      error: (closed) => {
        if (!closed) return;
        source = null;
        if (!stopped) later(subscribe);
      },
    });
  };
  try {
    await count();
  } catch { /* asked again below */ }
  if (stopped || state.user !== user) return;
  subscribe();
}

/** How often the unread count is asked without a live channel (ms). */
const NOTIFICATIONS_POLL_MS = 30000;

function setUnread(count) {
  const grew = count > state.alerts.unread;
  state.alerts.unread = count;
  $('notification-number').textContent = count > 99 ? '99+' : String(count);
  $('notification-count').hidden = count === 0;
  const link = $('notifications-link');
  if (count === 0) link.removeAttribute('aria-describedby'); else link.setAttribute('aria-describedby', 'notification-count');
  if (grew) $('notification-news').textContent = `${$('notification-number').textContent} new notifications`;
}

async function showNotifications() {
  unfollow();
  const shown = ++state.shown;
  state.view = { kind: 'notifications', items: [] };
  state.photos = [];
  $('heading').textContent = 'Notifications';
  renderViews();
  renderHead();
  notify('');
  for (const id of ['grid', 'results', 'more']) $(id).hidden = true;
  const list = $('notification-list');
  list.replaceChildren();
  list.hidden = false;
  try {
    const items = rows(await signedIn('notifications', { count: PAGE }));
    if (shown !== state.shown) return;
    addNotifications(items, false);
    markSeen();
    if (items.length === 0) notify('No notifications yet: likes, comments and follows of yours show here.');
  } catch (failure) {
    if (shown === state.shown) notify(failure instanceof APIError ? failure.message : 'The notifications could not be loaded.');
  }
}

/** Items into the list: newer ones at its top, a page at its end. */
function addNotifications(items, newer) {
  const view = state.view;
  if (view.kind !== 'notifications') return;
  const fresh = items.filter((item) => !view.items.some((known) => known.id === item.id));
  view.items = newer ? [...fresh, ...view.items] : [...view.items, ...fresh];
  const elements = fresh.map(notificationItem);
  if (newer) $('notification-list').prepend(...elements); else $('notification-list').append(...elements);
  if (view.items.length > 0) notify('');
}

/** "bob liked your photo", "bob followed you", "bob commented: …", each a link to what it is about. */
function notificationItem(item) {
  const li = document.createElement('li');
  const who = document.createElement('a');
  who.href = `#/user/${encodeURIComponent(item.IdUser)}`;
  who.textContent = item.username;
  const what = document.createElement('span');
  const link = (text) => {
    const photo = document.createElement('a');
    photo.href = `#/photo/${encodeURIComponent(item.IdPhoto)}`;
    photo.textContent = text;
    return photo;
  };
  if (item.type === 'follow') what.append(' followed you');
  else if (item.type === 'favourite') what.append(' liked ', link('your photo'));
  else {
    what.append(' commented on ', link('your photo'));
    const said = document.createElement('span');
    said.className = 'said';
    said.dir = 'auto';
    said.textContent = item.text ?? '';
    what.append(said);
  }
  const when = document.createElement('time');
  when.className = 'when';
  const date = new Date(Number(item.created) * 1000);
  when.dateTime = date.toISOString();
  when.textContent = date.toLocaleString();
  const sentence = document.createElement('p');
  sentence.append(who, what);
  li.append(sentence, when);
  return li;
}

function markSeen() {
  const newest = Math.max(0, ...state.view.items.map((item) => Number(item.id)));
  if (newest > (Number(localStorage.getItem(seenKey())) || 0)) {
    localStorage.setItem(seenKey(), String(newest));
    // Read here, read on the phone too (a server without markers says no: this browser's stays).
    call('mark', { notifications: newest }).catch(() => {});
  }
  state.alerts.seen += 1; // an answer to a question asked before is out of date
  setUnread(0);
}

// --------------------------------------------------------------- settings --

/** The account's page: change the password, download everything, delete the account. */
function showSettings() {
  unfollow();
  ++state.shown; // an answer for the photos left is dropped
  state.view = { kind: 'settings' };
  state.photos = [];
  $('heading').textContent = 'Settings';
  renderViews();
  renderHead();
  notify('');
  for (const id of ['grid', 'results', 'more', 'notification-list']) $(id).hidden = true;
  for (const id of ['password-error', 'password-done', 'export-error']) $(id).hidden = true;
  // Its forms are a signed-in person's: after the login (route draws them then).
  if (!state.user) { $('settings').hidden = true; openLogin(); return; }
  showApps();
}

/**
 * The apps given access through the Mastodon-compatible API, each with a
 * button that takes it back; the section stays hidden where the server has
 * no such apps (the original).
 */
async function showApps() {
  const [section, list, error] = [$('apps-section'), $('app-list'), $('apps-error')];
  error.hidden = true;
  let apps;
  try {
    apps = rows(await signedIn('authorized_apps'));
  } catch (failure) {
    section.hidden = !serversOwnFailure(failure);
    if (!section.hidden) showError(error, failure);
    return;
  }
  section.hidden = false;
  list.replaceChildren(...apps.map((app) => {
    const item = document.createElement('li');
    const name = document.createElement('span');
    name.className = 'app-name';
    name.textContent = app.name;
    const detail = document.createElement('span');
    detail.className = 'app-detail';
    const used = Number(app.last_used);
    detail.textContent = `access: ${app.scopes}` + (used > 0 ? ` · last used ${new Date(used * 1000).toLocaleDateString()}` : '');
    const revoke = button('Revoke', () => revokeApp(app, revoke));
    revoke.className = 'secondary';
    revoke.setAttribute('aria-label', `Revoke ${app.name}`);
    item.append(name, detail, revoke);
    return item;
  }));
  $('apps-empty').hidden = apps.length > 0;
}

async function revokeApp(app, control) {
  control.disabled = true;
  try {
    await signedIn('revoke_app', { IdApp: app.IdApp });
    await showApps();
  } catch (failure) {
    control.disabled = false;
    showError($('apps-error'), failure);
  }
}

/** A change on its way: the button says so (aria-disabled), and keeps the focus a disabled one would drop. */
let changingPassword = false;

async function changePassword(event) {
  event.preventDefault();
  if (changingPassword) return;
  const [error, done] = [$('password-error'), $('password-done')];
  error.hidden = done.hidden = true;
  changingPassword = true;
  $('password-button').setAttribute('aria-disabled', 'true');
  try {
    await signedIn('change_password', { password: appPassword($('current-password').value),
                                        new_password: appPassword($('new-password').value) });
    $('password-form').reset();
    done.textContent = 'Your password is changed. Your other sessions are logged out.';
    done.hidden = false;
  } catch (failure) {
    showError(error, failure);
  } finally {
    changingPassword = false;
    $('password-button').removeAttribute('aria-disabled');
  }
}

/**
 * The download is the form's own POST (the browser saves the zip as it
 * comes); a session ended meanwhile (a new password elsewhere) would leave
 * the page for the server's JSON answer: asked first, as Settings asks when
 * it opens, and the login offered instead.
 */
async function downloadData(event) {
  event.preventDefault();
  $('export-error').hidden = true;
  try {
    await signedIn('authorized_apps');
  } catch (failure) {
    // Unreachable or unavailable: submitted, the form would leave this page for the browser's error page, or the server's JSON.
    if (!sessionLost(failure)) showError($('export-error'), failure);
    return;
  }
  event.target.submit();
}

/** The confirmation says what goes, with the number of photos where the server counts them. */
async function confirmDeletion() {
  if (!state.user) { openLogin(); return; }
  $('delete-error').hidden = true;
  $('delete-form').reset();
  const what = $('delete-what');
  const describe = (count) => {
    const photos = count === 0 ? '' : `${count === null ? 'All your photos' : `Your ${count} ${count === 1 ? 'photo' : 'photos'}`} (in every size), `;
    const rest = `${photos ? 'your' : 'Your'} comments and your votes, and the account ${state.user.username} itself will be deleted.`;
    what.textContent = `${photos}${rest} This cannot be undone.`;
  };
  describe(null);
  $('delete-dialog').showModal();
  $('delete-password').focus();
  const person = await aboutPerson(state.user.IdUser);
  if (person?.photos !== null && person?.photos !== undefined && $('delete-dialog').open) describe(person.photos);
}

let deletingAccount = false;

async function deleteAccount(event) {
  event.preventDefault();
  if (deletingAccount) return;
  const error = $('delete-error');
  error.hidden = true;
  deletingAccount = true;
  $('delete-confirm').setAttribute('aria-disabled', 'true');
  try {
    await signedIn('delete_account', { password: appPassword($('delete-password').value) });
    $('delete-dialog').close();
    setUser(null);
    history.replaceState(null, '', '#/');
    // After the stream is shown: an empty one would say "No photos yet." over it.
    await route();
    notify('Your account and everything in it are deleted.');
    document.querySelector('#account button')?.focus(); // Log in; the Settings the focus was in are gone
  } catch (failure) {
    showError(error, failure);
  } finally {
    deletingAccount = false;
    $('delete-confirm').removeAttribute('aria-disabled');
  }
}

// --------------------------------------------------------------- routing --

/** Shows the view the hash names; for a list of photos, resolves once they are drawn. */
function route() {
  leaving = false;
  const followedFrom = linkFollowedFrom;
  linkFollowedFrom = null;
  // Split before decoding: a search may hold a "/" (AC/DC).
  const [, kind, encoded] = (location.hash.slice(1) || '/').split('/');
  let value = encoded;
  try { value = encoded === undefined ? undefined : decodeURIComponent(encoded); } catch { /* a stray % stays as typed */ }
  if (kind === 'photo' && value) {
    const overView = $('viewer').hidden ? followedFrom : null;
    // A photo from the notifications is shown over them, not over a grid drawn behind.
    if (state.photos.length === 0 && state.view.kind !== 'notifications') {
      // Another view chosen while the grid under it loads: not opened over that one.
      const hash = location.hash;
      refresh().then(() => { if (location.hash === hash) openPhoto(value, overView); });
    } else {
      openPhoto(value, overView);
    }
    return;
  }
  // Back from a photo to the view under it: that view as it was (its older pages, where it was scrolled to).
  if (!$('viewer').hidden && (location.hash || '#/') === backHash()) { closeViewer(); return; }
  closeViewer();
  $('settings').hidden = kind !== 'settings';
  if (kind === 'settings') {
    showSettings();
    return;
  }
  if (kind === 'search' && value !== undefined && state.features.search) {
    state.view = { kind: 'search', query: value };
    $('heading').textContent = `Photos matching “${value}”`;
    $('search-input').value = value;
  } else if (kind === 'user' && value) {
    state.view = { kind: 'user', userID: value, person: null };
    $('heading').textContent = 'Photos by this person';
  } else if (kind === 'home' && state.user && state.features.graph) {
    state.view = { kind: 'home' };
    $('heading').textContent = 'Home: the people you follow';
  } else if (kind === 'liked' && state.user && state.features.liked) {
    state.view = { kind: 'liked' };
    $('heading').textContent = 'Photos you like';
  } else if (kind === 'notifications' && state.user && state.features.graph) {
    showNotifications();
    return;
  } else {
    state.view = { kind: 'stream' };
    $('heading').textContent = state.features.graph ? 'Explore: everyone’s newest photos' : 'Newest photos';
  }
  $('notification-list').hidden = true;
  renderViews();
  renderHead();
  const view = state.view;
  if (view.kind === 'user') aboutPerson(view.userID).then((person) => { view.person = person; renderHead(); });
  return refresh().then(() => { view.loaded = true; renderHead(); });
}

/** A person's page opens with a header: their name and how many photos they have. */
function renderHead() {
  const view = state.view;
  const person = view.kind === 'user';
  $('page-head').classList.toggle('profile', person);
  $('avatar').hidden = !person;
  if (!person) { $('stats').hidden = $('follow-button').hidden = true; return; }
  const shown = view.loaded && state.photos.length > 0 && String(state.photos[0].IdUser) === String(view.userID);
  const name = view.person?.username ?? (shown ? state.photos[0].username : null);
  if (name !== null && name !== undefined) {
    $('heading').textContent = name;
    $('avatar').textContent = initial(name);
  }
  renderStats();
}

function renderStats() {
  const view = state.view;
  const follow = $('follow-button');
  follow.hidden = true;
  if (view.kind !== 'user') return;
  // The server's count; or, where it gives none, the photos shown once they are all there
  // (not from the original, which shows only the newest 50 of everyone's).
  const all = view.loaded && state.features.extras && $('more').hidden;
  const count = view.person?.photos ?? (all ? state.photos.length : null);
  const counts = count === null ? [] : [`${count} ${count === 1 ? 'photo' : 'photos'}`];
  const person = view.person;
  if (person && person.followers !== undefined) {
    counts.push(`${person.followers} ${person.followers === 1 ? 'follower' : 'followers'}`, `${person.following} following`);
  }
  $('stats').textContent = counts.join(' · ');
  $('stats').hidden = counts.length === 0;
  // Follow / Unfollow: on someone else's page, signed in, where the server has follows.
  if (person && person.followed !== undefined && state.user && String(state.user.IdUser) !== String(view.userID)) {
    follow.textContent = person.followed ? 'Unfollow' : 'Follow';
    follow.className = person.followed ? '' : 'primary';
    follow.hidden = false;
  }
}

async function toggleFollow() {
  const view = state.view;
  if (view.kind !== 'user' || !view.person) return;
  const button = $('follow-button');
  button.disabled = true;
  try {
    await signedIn(view.person.followed ? 'unfollow' : 'follow', { IdUser: view.userID });
    const person = await aboutPerson(view.userID);
    if (state.view === view && person) { view.person = person; renderStats(); }
  } catch (failure) {
    notify(failure instanceof APIError ? failure.message : 'Something went wrong. Try again.');
  } finally {
    button.disabled = false;
    $('follow-button').focus();
  }
}

/** The letter standing for a person where a picture of them would be. */
function initial(name) {
  return [...String(name ?? '').trim()][0]?.toUpperCase() ?? '';
}

/**
 * A person's name and photo count, from the Flickr-compatible API's
 * flickr.people.getInfo (docs/API.md); null where the server has none
 * (the PHP original) or answers with an error.
 */
async function aboutPerson(userID) {
  if (!state.features.extras) return null; // the 2012 server: no such API
  if (state.features.graph) {
    // {"IdUser","username","photos","followers","following","followed"}: followed is null without a session.
    try {
      const [person] = rows(await call('person', { IdUser: userID }));
      if (!person) return null;
      const followed = person.followed === null ? undefined : String(person.followed) === '1';
      return { username: person.username, photos: Number(person.photos), followers: Number(person.followers),
               following: Number(person.following), followed };
    } catch {
      return null;
    }
  }
  const query = new URLSearchParams({ method: 'flickr.people.getInfo', user_id: userID, format: 'json', nojsoncallback: '1' });
  try {
    const response = await fetch(`${API_URL}services/rest/?${query}`, { credentials: 'same-origin' });
    const answer = response.ok ? await response.json() : null;
    const person = answer && answer.person;
    if (!person) return null;
    const content = (field) => (field && typeof field === 'object' ? field._content : field);
    const photos = Number(content(person.photos?.count));
    return { username: content(person.username) ?? null, photos: Number.isFinite(photos) ? photos : null };
  } catch {
    return null;
  }
}

/**
 * What this server offers beyond the 2012 commands. The original answers an
 * unknown command with an empty body; a known one answers JSON (or an error).
 * `extras` comes with the tutorial's other next steps: votes, comments,
 * cursors (`before`, `since`, `count`), a person's photos, `delete`.
 */
async function detectFeatures() {
  let outage = false;
  // Any question the server could not answer (down, unreachable, a 502): asked again.
  const noteOutage = (failure) => { if (unreachable(failure)) outage = true; };
  const [extras, sizes, effects, search, person, liked] = await Promise.all([
    // A server with `extras` refuses an unknown one; the original ignores the field.
    call('stream', { count: 1, extras: 'unknown' }).then(() => false, (failure) => {
      noteOutage(failure);
      return serversOwnFailure(failure);
    }),
    // One that has the photos' sizes names them (a photo without a secret still keeps the 2012 URLs).
    call('stream', { count: 1, extras: 'secret,server' }).then(() => true, (failure) => { noteOutage(failure); return false; }),
    probe('effects', {}, noteOutage), probe('search', { q: 'a' }, noteOutage), probe('person', { IdUser: 1 }, noteOutage),
    // Asked without a session it exists if it says so ("Authorization required").
    probe('liked', { count: 1 }, noteOutage)]);
  state.features.extras = extras;
  state.features.sizes = extras && sizes;
  state.features.search = search !== null;
  state.features.graph = person !== null;
  state.features.liked = liked !== null;
  // {"effect":"sepia","summary":"brown-toned black and white …"}, …
  state.features.effects = rows(effects).filter((effect) => typeof effect.effect === 'string' && effect.effect !== '');
  $('search-form').hidden = !state.features.search;
  renderViews();
  listenForNotifications();
  // Down or unreachable as the page started: what it offers is asked again
  // (not taken for the 2012 server's, which has none of it), the view drawn anew.
  if (outage) {
    setTimeout(() => detectFeatures().then(() => { if ($('viewer').hidden && !document.querySelector('dialog[open]')) route(); }),
               FEATURES_RETRY_MS);
  }
}

/** How soon what the server offers is asked again after it could not be reached. */
const FEATURES_RETRY_MS = 5000;

/**
 * The command's answer; {} for an error answer (the command exists), null
 * when absent, or when it could not be asked (then `noteOutage` hears of it).
 */
async function probe(command, fields, noteOutage) {
  try {
    return await call(command, fields);
  } catch (failure) {
    noteOutage(failure);
    return serversOwnFailure(failure) ? {} : null;
  }
}

/** An error the server answered itself (a command's failure), not one the page says for an answer it did not get. */
function serversOwnFailure(failure) {
  return failure instanceof APIError && !failure.message.startsWith('The server');
}

/** Not an answer of the server's own: it is down, or cannot be reached. */
function unreachable(failure) {
  return failure instanceof APIError && /^The server (cannot be reached|answered HTTP 5)/.test(failure.message);
}

function start() {
  renderAccount();
  $('login-form').addEventListener('submit', submitLogin);
  $('post-form').addEventListener('submit', submitPost);
  $('export-form').addEventListener('submit', downloadData);
  $('post-file').addEventListener('change', choosePhoto);
  $('effect-row').addEventListener('change', chooseEffect);
  $('login-dialog').addEventListener('close', () => { afterLogin = null; }); // not logged in after all
  new MutationObserver(renderDocumentTitle).observe($('heading'), { childList: true, characterData: true, subtree: true });
  $('post-dialog').addEventListener('close', () => {
    post.sending?.abort(); // Cancel while the photo is on its way: not posted
    forgetPhoto(); // no more previews asked for a photo let go
  });
  $('comment-form').addEventListener('submit', submitComment);
  $('password-form').addEventListener('submit', changePassword);
  $('delete-account').addEventListener('click', confirmDeletion);
  $('delete-form').addEventListener('submit', deleteAccount);
  $('follow-button').addEventListener('click', toggleFollow);
  $('comment-text').addEventListener('keydown', commentKey);
  $('like').addEventListener('click', () => vote('like'));
  $('dislike').addEventListener('click', () => vote('dislike'));
  $('delete').addEventListener('click', deletePhoto);
  $('viewer-close').addEventListener('click', leavePhoto);
  $('viewer-prev').addEventListener('click', () => step(-1));
  $('viewer-next').addEventListener('click', () => step(1));
  $('more-button').addEventListener('click', loadOlder);
  $('search-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const query = $('search-input').value.trim();
    location.hash = query ? `#/search/${encodeURIComponent(query)}` : '#/';
  });
  for (const closer of document.querySelectorAll('[data-close]')) {
    closer.addEventListener('click', () => closer.closest('dialog').close());
  }
  document.addEventListener('keydown', (event) => {
    // A dialog over the photo (the login) has the keys; so has a field's cursor.
    if ($('viewer').hidden || event.defaultPrevented || document.querySelector('dialog[open]')) return;
    if (event.key === 'Escape') leavePhoto();
    else if (event.target.closest('input, textarea, select, [contenteditable]')) return;
    else if (event.key === 'ArrowLeft') step(-1);
    else if (event.key === 'ArrowRight') step(1);
  });
  // On the photo: a drag across the comments selects their text.
  swipe(document.querySelector('.viewer-stage'), (direction) => step(direction));
  doubleTap($('viewer-image'), likeByDoubleTap);
  // Infinite scroll: the next older page as the end of the list comes near (the button stays for keyboards).
  new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting)) loadOlder();
  }, { rootMargin: `0px 0px ${SCROLL_AHEAD}px 0px` }).observe($('more'));
  window.addEventListener('hashchange', route);
  document.addEventListener('click', (event) => {
    // A plain click (a modified one opens another tab); Enter on a link is a click too.
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    // Followed from the view itself (its entry is the one the link's goes on): not from a photo's.
    if (event.target.closest?.('a[href^="#/photo/"]') && (location.hash || '#/') === backHash()) linkFollowedFrom = backHash();
  });
  window.addEventListener('storage', followOtherTabs);
  detectFeatures().finally(route);
}

/**
 * A horizontal swipe of 50 px or more: -1 (to the right: previous) or 1.
 * (The photo is not draggable: a drag would cancel the pointer.)
 */
function swipe(element, onSwipe) {
  let startX = null;
  element.addEventListener('pointerdown', (event) => { startX = event.clientX; });
  element.addEventListener('pointerup', (event) => {
    if (startX === null) return;
    const distance = event.clientX - startX;
    startX = null;
    if (Math.abs(distance) >= 50) onSwipe(distance > 0 ? -1 : 1);
  });
}

/** Two taps of a finger within 300 ms and 30 px of each other (a mouse's double click selects text, as usual). */
function doubleTap(element, onDoubleTap) {
  let last = null;
  element.addEventListener('pointerup', (event) => {
    if (event.pointerType !== 'touch') return;
    const near = last && event.timeStamp - last.time < 300
      && Math.hypot(event.clientX - last.x, event.clientY - last.y) < 30;
    last = near ? null : { time: event.timeStamp, x: event.clientX, y: event.clientY };
    if (near) onDoubleTap();
  });
}

start();
