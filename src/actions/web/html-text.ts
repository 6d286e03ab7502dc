/**
 * What a reader takes from an HTML page: its title, its readable text and its links. One pass over the markup
 * with a small tokenizer — tags, comments, `<!…>` declarations, CDATA, attributes quoted either way or not at all —
 * so it is linear however the page is broken (10 MB of `<`, an unclosed comment, a script that never ends), and
 * never throws. Not a full HTML parser: it does not build a tree, and needs none to read text.
 *
 * - Dropped with their content: script, style, noscript, template, svg, head (the title is read first), and the
 *   page furniture nav, footer, aside, form.
 * - Block elements (p, div, headings, li, tr, br, …) end lines; other whitespace collapses; entities (named,
 *   decimal, hex) are decoded.
 * - Links are `<a href>` resolved against the page's URL (and a `<base href>`), with their text; `javascript:`
 *   and fragment-only links are left out.
 */

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'nav', 'footer', 'aside', 'form', 'iframe', 'object'])
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title'])
const BLOCK = new Set([
  'p',
  'div',
  'br',
  'hr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'li',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'tr',
  'table',
  'section',
  'article',
  'main',
  'header',
  'blockquote',
  'pre',
  'figure',
  'figcaption',
  'address',
  'details',
  'summary',
])

export interface PageLink {
  href: string
  text: string
}

export interface PageText {
  title: string
  text: string
  links: PageLink[]
}

export function readHtml(html: string, pageUrl: string, maxLinks: number): PageText {
  let title = ''
  let base = pageUrl
  const out: string[] = []
  const links: PageLink[] = []
  let skipDepth = 0
  let skipping: string | undefined
  let link: { href: string; text: string[] } | undefined
  let i = 0
  const n = html.length
  const emit = (text: string): void => {
    if (skipDepth > 0) return
    out.push(text)
    if (link) link.text.push(text)
  }
  while (i < n) {
    const lt = html.indexOf('<', i)
    if (lt === -1) {
      emit(decodeEntities(html.slice(i)))
      break
    }
    if (lt > i) emit(decodeEntities(html.slice(i, lt)))
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4)
      i = end === -1 ? n : end + 3
      continue
    }
    if (html.startsWith('<![CDATA[', lt)) {
      const end = html.indexOf(']]>', lt + 9)
      emit(html.slice(lt + 9, end === -1 ? n : end))
      i = end === -1 ? n : end + 3
      continue
    }
    if (html[lt + 1] === '!' || html[lt + 1] === '?') {
      const end = html.indexOf('>', lt + 2)
      i = end === -1 ? n : end + 1
      continue
    }
    const tag = readTag(html, lt)
    if (!tag) {
      emit('<')
      i = lt + 1
      continue
    }
    i = tag.end
    const name = tag.name
    if (!tag.closing && RAW_TEXT.has(name)) {
      // Raw text runs to the matching end tag, whatever it contains.
      const close = indexOfCi(html, `</${name}`, i)
      const body = html.slice(i, close === -1 ? n : close)
      if (name === 'title' && !title) title = collapse(decodeEntities(body))
      else if (name === 'textarea') emit(decodeEntities(body))
      i = close === -1 ? n : Math.max(close + 1, html.indexOf('>', close) + 1 || n)
      continue
    }
    if (skipping) {
      if (name === skipping) skipDepth += tag.closing ? -1 : tag.selfClosing ? 0 : 1
      if (skipDepth === 0) skipping = undefined
      continue
    }
    if (!tag.closing && SKIPPED.has(name) && !tag.selfClosing) {
      skipping = name
      skipDepth = 1
      continue
    }
    if (name === 'base' && tag.attrs.href && base === pageUrl) base = resolve(tag.attrs.href, pageUrl) ?? pageUrl
    if (name === 'a') {
      if (link) finishLink(link, links, maxLinks)
      link = undefined
      if (!tag.closing && tag.attrs.href !== undefined) {
        const href = resolve(tag.attrs.href, base)
        if (href) link = { href, text: [] }
      }
    }
    if (BLOCK.has(name) && !(name === 'li' && tag.closing)) emit('\n')
    if (name === 'li' && !tag.closing) emit('- ')
    if ((name === 'td' || name === 'th') && !tag.closing) emit(' ')
  }
  if (link) finishLink(link, links, maxLinks)
  return { title, text: tidy(out.join('')), links }
}

function finishLink(link: { href: string; text: string[] }, links: PageLink[], max: number): void {
  if (links.length < max) links.push({ href: link.href, text: collapse(link.text.join('')) })
}

interface Tag {
  name: string
  closing: boolean
  selfClosing: boolean
  attrs: Record<string, string>
  end: number
}

/** The tag at `<` (index `at`), or undefined when what follows is not a tag (`a < b` in text). */
function readTag(s: string, at: number): Tag | undefined {
  let i = at + 1
  const closing = s[i] === '/'
  if (closing) i++
  const nameStart = i
  while (i < s.length && /[A-Za-z0-9:-]/.test(s[i]!)) i++
  if (i === nameStart || !/[A-Za-z]/.test(s[nameStart]!)) return undefined
  const name = s.slice(nameStart, i).toLowerCase()
  const attrs: Record<string, string> = {}
  for (;;) {
    while (i < s.length && /\s/.test(s[i]!)) i++
    if (i >= s.length) return { name, closing, selfClosing: false, attrs, end: s.length }
    if (s[i] === '>') return { name, closing, selfClosing: false, attrs, end: i + 1 }
    if (s[i] === '/' && s[i + 1] === '>') return { name, closing, selfClosing: true, attrs, end: i + 2 }
    const keyStart = i
    while (i < s.length && !/[\s=>]/.test(s[i]!) && !(s[i] === '/' && s[i + 1] === '>')) i++
    const key = s.slice(keyStart, i).toLowerCase()
    if (i === keyStart) i++ // a stray character: step over it
    while (i < s.length && /\s/.test(s[i]!)) i++
    let value = ''
    if (s[i] === '=') {
      i++
      while (i < s.length && /\s/.test(s[i]!)) i++
      const q = s[i]
      if (q === '"' || q === "'") {
        const end = s.indexOf(q, i + 1)
        value = s.slice(i + 1, end === -1 ? s.length : end)
        i = end === -1 ? s.length : end + 1
      } else {
        const start = i
        while (i < s.length && !/[\s>]/.test(s[i]!)) i++
        value = s.slice(start, i)
      }
    }
    if (key && !(key in attrs)) attrs[key] = decodeEntities(value)
  }
}

function indexOfCi(s: string, needle: string, from: number): number {
  const re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'gi')
  re.lastIndex = from
  const m = re.exec(s)
  return m ? m.index : -1
}

function resolve(href: string, base: string): string | undefined {
  const h = href.trim()
  if (h === '' || h.startsWith('#') || /^(javascript|data|mailto|tel):/i.test(h)) return undefined
  try {
    return new URL(h, base).href
  } catch {
    return undefined
  }
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  copy: '©',
  reg: '®',
  trade: '™',
  laquo: '«',
  raquo: '»',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  bull: '•',
  middot: '·',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  sect: '§',
  deg: '°',
  plusmn: '±',
  times: '×',
  divide: '÷',
  szlig: 'ß',
  auml: 'ä',
  ouml: 'ö',
  uuml: 'ü',
  Auml: 'Ä',
  Ouml: 'Ö',
  Uuml: 'Ü',
  eacute: 'é',
  egrave: 'è',
  aacute: 'á',
  agrave: 'à',
  ccedil: 'ç',
  ntilde: 'ñ',
  oacute: 'ó',
  iacute: 'í',
  uacute: 'ú',
  ecirc: 'ê',
  acirc: 'â',
  ocirc: 'ô',
}

export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s
  return s.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?/g, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10)
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\uFFFD'
    }
    return NAMED[body] ?? whole
  })
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim()
}

/** Lines collapsed and trimmed, blank runs reduced to one blank line. */
function tidy(s: string): string {
  return s
    .split('\n')
    .map(collapse)
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
