/* tokexplorer.core.training._merge: the merge loop of byte-level BPE training, compiled.
 *
 * The same algorithm as bpe_training._train_python (read its docstring first), so the same merges
 * in the same order, ties included (minbpe's: the most frequent pair, and among equals the one that
 * occurs first in the token stream):
 *
 *   - the distinct chunks laid end to end as one stream of byte positions, in flat arrays (a
 *     corpus trained with no pattern is one chunk as long as the corpus, so these are most of
 *     the memory): tok, the token starting at each position (16-bit while the ids fit, else
 *     32-bit; "none" inside a token); link, which at a token's first byte holds its end and at
 *     its last byte its start (a single-byte token needs neither: its neighbours are found by
 *     the next and previous positions' tokens), so the next and previous tokens are found from
 *     either side without a doubly linked list; a bit a position marking each chunk's start (no
 *     pair crosses it); and each position's chunk multiplicity only when some chunk counts more
 *     than once (never with no pattern). About 6 bytes a byte of stream, with 4 a byte for the
 *     byte pairs' positions below, where a node of four 32-bit fields took 16;
 *   - one Pair record per pair ever seen: its weighted count and its ascending positions (some
 *     stale: a position is checked against the stream when read);
 *   - a lazy max-heap keyed (count, first position, pair): counts only fall and first positions
 *     only move right, so a stale entry is never worse than the truth; the top is re-checked and
 *     re-filed until it is exact.
 *
 * A Merger object holds that state; Merger.merge(limit) makes up to `limit` merges (fewer when
 * they were large, or past MAX_BATCH, so that a call stays short and the caller can stop between
 * calls) with the interpreter lock released, and returns one tuple per merge, a MergeStep's fields
 * (step, total, (a, b), new_id, count, merged); an empty list when no pair is left or every merge
 * asked for is made.
 *
 * Positions, token ids and multiplicities are 32-bit: a stream of 2**31 bytes or more, or a chunk
 * counted 2**32 times or more, is refused (OverflowError) and the caller falls back to the Python
 * loop. Allocation failures raise MemoryError; the object is then unusable, and everything is
 * freed when it is collected (a generator dropped between merges drops its Merger with it).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t pos_t;  /* a byte position in the stream, or -1 */
typedef int32_t tok_t;  /* a token id, or -1 at a position merged into its left neighbour */

#define NO_PAIR UINT32_MAX
#define EMPTY_KEY UINT64_MAX   /* no pair has it: token ids are below 2**31 */
#define MERGE_BUDGET (1 << 16) /* positions visited per call before returning early */
#define MAX_BATCH 4096         /* merges per call at most, whatever the caller asks */

#define NONE16 UINT16_MAX   /* tok16 inside a token (ids stay below it while tok16 is used) */

typedef struct {
    uint64_t key;   /* a << 32 | b: orders pairs as minbpe's tuples (a, b) */
    int64_t count;  /* occurrences in the whole text (weighted); 0 once the pair is gone */
    pos_t *at;      /* positions where the pair was made, ascending; at[head:len] still to check */
    int64_t head, len, cap;
} Pair;

typedef struct {
    int64_t count;  /* the pair's count when filed: never below the truth */
    pos_t pos;      /* its first position when filed: never after the truth */
    uint32_t pair;  /* index into pairs */
} Entry;

/* A merge of (a, b) into `new` touches pairs that have a neighbour token t beside an occurrence:
 * (t, a) and (b, t) lose occurrences, (t, new) and (new, t) are made. near[role][t] finds their
 * records once per neighbour rather than probing the big pair table at every occurrence (an entry
 * stamped by an older merge is stale), and lost[role][t] adds up the losses, applied at the merge's
 * end (counts are read only between merges). Indexed by token: tokens are below the new one. */
enum { LOSES_LEFT, LOSES_RIGHT, MADE_LEFT, MADE_RIGHT, ROLES };

typedef struct {
    uint32_t stamp;  /* the merge that filled it */
    uint32_t pair;   /* index into pairs */
} Near;

typedef struct {
    int64_t step;
    uint64_t a, b, new_id;
    int64_t count, merged;
} Result;

typedef struct {
    PyObject_HEAD
    Py_ssize_t size;        /* positions in the stream */
    uint16_t *tok16;        /* position -> the token starting there, NONE16 inside one; or */
    tok_t *tok32;           /* the same, -1 inside a token, when ids pass 16 bits */
    pos_t *link;            /* at a token's first byte its end, at its last byte its start */
    uint8_t *starts;        /* bit per position: a chunk starts there */
    uint32_t *weight;       /* position -> occurrences of its chunk; NULL when every chunk counts once */
    Pair *pairs;            /* every pair seen; a gone pair keeps its record but not its positions */
    uint32_t n_pairs, pairs_cap;
    uint64_t *keys;         /* open-addressing table pair key -> index into pairs */
    uint32_t *slots;
    size_t table_mask;
    Entry *heap;
    size_t heap_len, heap_cap;
    uint32_t *made;         /* the pairs made by the merge in progress */
    size_t n_made, made_cap;
    Near *near[ROLES];      /* role -> token -> the pair the merge in progress touches (see Near) */
    int64_t *lost[2];       /* LOSES role -> token -> occurrences lost in the merge in progress */
    size_t near_cap;        /* tokens each of near[] and lost[] holds */
    uint32_t stamp;         /* the merge in progress's */
    uint32_t *touched;      /* t << 1 | role of each LOSES entry of the merge in progress */
    size_t n_touched, touched_cap;
    Result *results;
    size_t results_cap;
    int64_t step, total;    /* merges made, merges asked for */
    int busy;               /* a call is running (with the lock released) */
    int broken;             /* its set-up or a merge failed: the state is not to be used */
} Merger;

/* ---- growable arrays and the pair table (no Python calls: usable without the lock) ---------- */

static int grow(void **items, size_t *cap, size_t need, size_t item_size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*items, n * item_size);
    if (!p)
        return -1;
    *items = p;
    *cap = n;
    return 0;
}

static inline size_t hash_key(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ULL;
    k ^= k >> 29;
    return (size_t)k;
}

static uint32_t find_pair(const Merger *m, uint64_t key)
{
    size_t i = hash_key(key) & m->table_mask;
    while (m->keys[i] != EMPTY_KEY) {
        if (m->keys[i] == key)
            return m->slots[i];
        i = (i + 1) & m->table_mask;
    }
    return NO_PAIR;
}

static void put_slot(uint64_t *keys, uint32_t *slots, size_t mask, uint64_t key, uint32_t index)
{
    size_t i = hash_key(key) & mask;
    while (keys[i] != EMPTY_KEY)
        i = (i + 1) & mask;
    keys[i] = key;
    slots[i] = index;
}

/* Keep the table at most half full (the pairs are never removed from it: see add_pair). */
static int reserve_table(Merger *m, size_t need)
{
    size_t cap = m->table_mask + 1;
    if (m->keys && 2 * need <= cap)
        return 0;
    size_t n = m->keys ? cap : 1024;
    while (2 * need > n)
        n *= 2;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *slots = malloc(n * sizeof *slots);
    if (!keys || !slots) {
        free(keys);
        free(slots);
        return -1;
    }
    memset(keys, 0xff, n * sizeof *keys); /* EMPTY_KEY everywhere */
    for (size_t i = 0; m->keys && i < cap; i++)
        if (m->keys[i] != EMPTY_KEY)
            put_slot(keys, slots, n - 1, m->keys[i], m->slots[i]);
    free(m->keys);
    free(m->slots);
    m->keys = keys;
    m->slots = slots;
    m->table_mask = n - 1;
    return 0;
}

/* A new pair record with room for `cap` positions. A key is made in one merge only (it contains
 * that merge's new token, or two bytes at the start), and a gone pair never comes back, so records
 * are never removed: a gone pair just frees its positions. */
static uint32_t add_pair(Merger *m, uint64_t key, int64_t cap)
{
    if (m->n_pairs == NO_PAIR || reserve_table(m, (size_t)m->n_pairs + 1) < 0)
        return NO_PAIR;
    if (m->n_pairs == m->pairs_cap) {
        size_t c = m->pairs_cap;
        if (grow((void **)&m->pairs, &c, (size_t)m->n_pairs + 1, sizeof(Pair)) < 0 || c > NO_PAIR)
            return NO_PAIR;
        m->pairs_cap = (uint32_t)c;
    }
    Pair *p = &m->pairs[m->n_pairs];
    p->key = key;
    p->count = 0;
    p->head = p->len = 0;
    p->cap = cap;
    p->at = malloc((size_t)(cap ? cap : 1) * sizeof(pos_t));
    if (!p->at)
        return NO_PAIR;
    put_slot(m->keys, m->slots, m->table_mask, key, m->n_pairs);
    return m->n_pairs++;
}

static void drop_positions(Pair *p)
{
    free(p->at);
    p->at = NULL;
    p->head = p->len = p->cap = 0;
}

static int append_position(Pair *p, pos_t pos)
{
    if (p->len == p->cap) {
        int64_t cap = p->cap ? 2 * p->cap : 4;
        pos_t *at = realloc(p->at, (size_t)cap * sizeof(pos_t));
        if (!at)
            return -1;
        p->at = at;
        p->cap = cap;
    }
    p->at[p->len++] = pos;
    return 0;
}

/* ---- the stream ---------------------------------------------------------------------------- */

static inline tok_t get_tok(const Merger *m, pos_t i)
{
    if (m->tok16) {
        uint16_t t = m->tok16[i];
        return t == NONE16 ? -1 : (tok_t)t;
    }
    return m->tok32[i];
}

static inline void set_tok(Merger *m, pos_t i, tok_t t)
{
    if (m->tok16)
        m->tok16[i] = t < 0 ? NONE16 : (uint16_t)t;
    else
        m->tok32[i] = t;
}

static inline int chunk_starts_at(const Merger *m, pos_t i)
{
    return m->starts[i >> 3] >> (i & 7) & 1;
}

/* The end of the token starting at s (one past its last byte). */
static inline pos_t end_of(const Merger *m, pos_t s)
{
    pos_t e = s + 1;
    /* inside the stream and no token starts at e: e is inside s's token, which is longer */
    if (e < m->size && get_tok(m, e) < 0)
        e = m->link[s];
    return e;
}

/* The token after the one starting at s in its chunk (its first position), or -1. */
static inline pos_t next_of(const Merger *m, pos_t s)
{
    pos_t e = end_of(m, s);
    return e >= m->size || chunk_starts_at(m, e) ? -1 : e;
}

/* The token before the one starting at s in its chunk (its first position), or -1. */
static inline pos_t prev_of(const Merger *m, pos_t s)
{
    if (chunk_starts_at(m, s))
        return -1;
    return get_tok(m, s - 1) >= 0 ? s - 1 : m->link[s - 1];
}

static inline int64_t weight_at(const Merger *m, pos_t i)
{
    return m->weight ? (int64_t)m->weight[i] : 1;
}

/* ---- the heap: the best entry on top (highest count, then earliest position, then pair) ----- */

static inline int better(const Merger *m, const Entry *x, const Entry *y)
{
    if (x->count != y->count)
        return x->count > y->count;
    if (x->pos != y->pos)
        return x->pos < y->pos;
    return m->pairs[x->pair].key < m->pairs[y->pair].key;
}

static void sift_down(Merger *m, size_t i)
{
    Entry *h = m->heap;
    size_t n = m->heap_len;
    Entry e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && better(m, &h[c + 1], &h[c]))
            c++;
        if (!better(m, &h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

static int heap_push(Merger *m, Entry e)
{
    if (grow((void **)&m->heap, &m->heap_cap, m->heap_len + 1, sizeof(Entry)) < 0)
        return -1;
    size_t i = m->heap_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!better(m, &e, &m->heap[parent]))
            break;
        m->heap[i] = m->heap[parent];
        i = parent;
    }
    m->heap[i] = e;
    return 0;
}

static void heap_pop(Merger *m)
{
    m->heap[0] = m->heap[--m->heap_len];
    if (m->heap_len)
        sift_down(m, 0);
}

/* ---- one merge ------------------------------------------------------------------------------- */

/* The pair's first live occurrence, dropping the stale positions before it for good (a pair is
 * never made again where it was); -1 if there is none, which a pair with a count cannot be. */
static pos_t first_position(Merger *m, Pair *p)
{
    tok_t a = (tok_t)(p->key >> 32), b = (tok_t)(p->key & 0xffffffffu);
    for (int64_t i = p->head; i < p->len; i++) {
        pos_t pos = p->at[i];
        if (get_tok(m, pos) == a) {
            pos_t q = next_of(m, pos);
            if (q >= 0 && get_tok(m, q) == b) {
                p->head = i;
                return pos;
            }
        }
    }
    return -1;
}

/* Keep only the pair's live positions (in order), when most of those listed are stale: a pair
 * that loses occurrences keeps them listed, and over thousands of merges the stale ones took as
 * much memory as the stream. (A count is at least the live positions, so more than twice the
 * count listed means over half stale: each compaction halves the list, so the work stays in
 * proportion to the positions ever listed.) */
static void compact_positions(Merger *m, Pair *p)
{
    tok_t a = (tok_t)(p->key >> 32), b = (tok_t)(p->key & 0xffffffffu);
    int64_t kept = 0;
    for (int64_t i = p->head; i < p->len; i++) {
        pos_t pos = p->at[i];
        if (get_tok(m, pos) == a) {
            pos_t q = next_of(m, pos);
            if (q >= 0 && get_tok(m, q) == b)
                p->at[kept++] = pos;
        }
    }
    p->head = 0;
    p->len = kept;
    pos_t *at = realloc(p->at, (size_t)(kept ? kept : 1) * sizeof(pos_t));
    if (at) {
        p->at = at;
        p->cap = kept ? kept : 1;
    }
}

/* The pair `key`, made by the merge in progress: found, or recorded and listed in made[]. */
static uint32_t made_pair(Merger *m, uint64_t key)
{
    uint32_t i = find_pair(m, key);
    if (i != NO_PAIR)
        return i;
    if (grow((void **)&m->made, &m->made_cap, m->n_made + 1, sizeof(uint32_t)) < 0)
        return NO_PAIR;
    i = add_pair(m, key, 0);
    if (i != NO_PAIR)
        m->made[m->n_made++] = i;
    return i;
}

/* Room in near[], lost[] and touched[] for every token up to `new_id`. */
static int reserve_near(Merger *m, tok_t new_id)
{
    size_t need = (size_t)new_id + 1, cap = m->near_cap;
    if (need <= cap)
        return 0;
    size_t n = cap ? cap : 1024;
    while (n < need)
        n *= 2;
    for (int role = 0; role < ROLES; role++) {
        Near *near = realloc(m->near[role], n * sizeof(Near));
        if (!near)
            return -1;
        memset(near + cap, 0, (n - cap) * sizeof(Near)); /* stamp 0: stale (stamps start at 1) */
        m->near[role] = near;
    }
    for (int role = 0; role < 2; role++) {
        int64_t *lost = realloc(m->lost[role], n * sizeof(int64_t));
        if (!lost)
            return -1;
        m->lost[role] = lost;
    }
    if (grow((void **)&m->touched, &m->touched_cap, 2 * n, sizeof(uint32_t)) < 0)
        return -1; /* room for both LOSES roles of every token */
    m->near_cap = n;
    return 0;
}

/* The pair that plays `role` beside neighbour t in the merge of (a, b) into new_id, found (or,
 * for a made pair, created) the first time; NO_PAIR if a pair that must exist does not, or if
 * memory ran out making one. */
static inline uint32_t near_pair(Merger *m, int role, tok_t t, tok_t a, tok_t b, tok_t new_id)
{
    Near *e = &m->near[role][t];
    if (e->stamp == m->stamp)
        return e->pair;
    uint64_t key = role == LOSES_LEFT ? (uint64_t)t << 32 | (uint32_t)a
                 : role == LOSES_RIGHT ? (uint64_t)b << 32 | (uint32_t)t
                 : role == MADE_LEFT ? (uint64_t)t << 32 | (uint32_t)new_id
                 : (uint64_t)new_id << 32 | (uint32_t)t;
    uint32_t pair = role >= MADE_LEFT ? made_pair(m, key) : find_pair(m, key);
    if (pair == NO_PAIR)
        return NO_PAIR;
    if (role < MADE_LEFT) {
        m->touched[m->n_touched++] = (uint32_t)t << 1 | (uint32_t)role;
        m->lost[role][t] = 0;
    }
    e->stamp = m->stamp;
    e->pair = pair;
    return pair;
}

enum { MERGED = 1, NOTHING_LEFT = 0, NO_MEMORY = -1, INCONSISTENT = -2 };

/* Pick the best pair and merge every occurrence of it, as the Python loop does. */
static int merge_one(Merger *m, Result *r, int64_t *visited)
{
    Entry top;
    for (;;) {
        if (!m->heap_len)
            return NOTHING_LEFT;
        top = m->heap[0];
        Pair *p = &m->pairs[top.pair];
        if (p->count <= 0) {
            heap_pop(m);
            drop_positions(p);
            continue;
        }
        if (p->count != top.count) {
            /* The count fell: re-file it; the position is checked when it counts. */
            m->heap[0].count = p->count;
            sift_down(m, 0);
            continue;
        }
        pos_t at = first_position(m, p);
        if (at < 0)
            return INCONSISTENT;
        if (at != top.pos) {
            m->heap[0].pos = at;
            sift_down(m, 0);
            continue;
        }
        heap_pop(m);
        break;
    }
    uint32_t merging = top.pair;
    uint64_t key = m->pairs[merging].key;
    tok_t a = (tok_t)(key >> 32), b = (tok_t)(key & 0xffffffffu);
    tok_t new_id = (tok_t)(256 + m->step);
    int64_t done = 0;
    m->n_made = 0;
    m->n_touched = 0;
    m->stamp++;
    if (reserve_near(m, new_id) < 0)
        return NO_MEMORY;
    /* subtle: m->pairs moves when a made pair is recorded; hold indices, not pointers, and read
     * the merging pair's positions through its own array, which does not move. */
    pos_t *cand = m->pairs[merging].at;
    int64_t from = m->pairs[merging].head, to = m->pairs[merging].len;
    *visited += to - from;
    for (int64_t i = from; i < to; i++) {
        pos_t pos = cand[i];
#ifdef __GNUC__
        /* Occurrences are scattered over the stream: ask for the node of one a few ahead. */
        if (i + 16 < to) {
            pos_t ahead = cand[i + 16];
            if (m->tok16)
                __builtin_prefetch(&m->tok16[ahead]);
            else
                __builtin_prefetch(&m->tok32[ahead]);
            __builtin_prefetch(&m->link[ahead]);
        }
#endif
        /* subtle: occurrences are visited left to right and re-checked, so an overlapping one
         * ("aaa" merging (a, a)) is skipped exactly as a left-to-right rewrite skips it. */
        if (get_tok(m, pos) != a)
            continue;
        pos_t q = next_of(m, pos);
        if (q < 0 || get_tok(m, q) != b)
            continue;
        int64_t f = weight_at(m, pos);
        done += f;
        pos_t left = prev_of(m, pos), end = end_of(m, q);
        pos_t right = end >= m->size || chunk_starts_at(m, end) ? -1 : end;
        uint32_t j;
        if (left >= 0) {
            tok_t t = get_tok(m, left);
            if (t == new_id) {
                /* subtle: the occurrence just before ("abab" merging (a, b)) made the pair
                 * (new, a) here, its last one; it becomes (new, new) instead. */
                if ((j = near_pair(m, MADE_RIGHT, a, a, b, new_id)) == NO_PAIR)
                    return NO_MEMORY;
                if (!m->pairs[j].len)
                    return INCONSISTENT;
                m->pairs[j].len--;
                m->pairs[j].count -= f;
            } else {
                if (near_pair(m, LOSES_LEFT, t, a, b, new_id) == NO_PAIR)
                    return INCONSISTENT;
                m->lost[LOSES_LEFT][t] += f;
            }
            if ((j = near_pair(m, MADE_LEFT, t, a, b, new_id)) == NO_PAIR
                || append_position(&m->pairs[j], left) < 0)
                return NO_MEMORY;
            m->pairs[j].count += f; /* left is in pos's chunk: the same weight */
        }
        if (right >= 0) {
            tok_t t = get_tok(m, right);
            if (near_pair(m, LOSES_RIGHT, t, a, b, new_id) == NO_PAIR)
                return INCONSISTENT;
            m->lost[LOSES_RIGHT][t] += f;
            if ((j = near_pair(m, MADE_RIGHT, t, a, b, new_id)) == NO_PAIR
                || append_position(&m->pairs[j], pos) < 0)
                return NO_MEMORY;
            m->pairs[j].count += f;
        }
        /* The new token spans pos..end: its ends point at each other (q's old links, now
         * inside it, are never read again). */
        set_tok(m, pos, new_id);
        set_tok(m, q, -1);
        m->link[pos] = end;
        m->link[end - 1] = pos;
    }
    for (size_t k = 0; k < m->n_touched; k++) {
        int role = (int)(m->touched[k] & 1);
        tok_t t = (tok_t)(m->touched[k] >> 1);
        Pair *p = &m->pairs[m->near[role][t].pair];
        p->count -= m->lost[role][t];
        if (p->count <= 0)
            drop_positions(p); /* gone for good; its heap entry is dropped when it surfaces */
        else if (p->len - p->head > 2 * p->count + 64)
            compact_positions(m, p);
    }
    m->pairs[merging].count = 0;
    drop_positions(&m->pairs[merging]);
    for (size_t k = 0; k < m->n_made; k++) {
        Pair *p = &m->pairs[m->made[k]];
        if (!p->len) {
            drop_positions(p);
            continue;
        }
        if (p->cap > p->len + p->len / 8 + 16) {
            /* Appending doubled it: give the slack back (a made pair only grows in its merge). */
            pos_t *at = realloc(p->at, (size_t)p->len * sizeof(pos_t));
            if (at) {
                p->at = at;
                p->cap = p->len;
            }
        }
        /* at[0] may be stale, i.e. earlier than the truth: fine for the lazy heap. */
        Entry e = {p->count, p->at[0], m->made[k]};
        if (heap_push(m, e) < 0)
            return NO_MEMORY;
    }
    m->step++;
    r->step = m->step;
    r->a = (uint64_t)a;
    r->b = (uint64_t)b;
    r->new_id = (uint64_t)new_id;
    r->count = top.count;
    r->merged = done;
    return MERGED;
}

/* ---- the Python type ------------------------------------------------------------------------- */

static void Merger_free_state(Merger *m)
{
    for (uint32_t i = 0; m->pairs && i < m->n_pairs; i++)
        free(m->pairs[i].at);
    free(m->pairs);
    free(m->keys);
    free(m->slots);
    free(m->heap);
    free(m->made);
    for (int role = 0; role < ROLES; role++)
        free(m->near[role]);
    free(m->lost[0]);
    free(m->lost[1]);
    free(m->touched);
    free(m->results);
    free(m->tok16);
    free(m->tok32);
    free(m->link);
    free(m->starts);
    free(m->weight);
    /* Everything after the object's header back to zero: no memory, no capacity, no merges. */
    memset(&m->size, 0, sizeof(Merger) - offsetof(Merger, size));
}

static void Merger_dealloc(Merger *m)
{
    Merger_free_state(m);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

/* The starting state: the stream, the byte pairs with their positions, the heap. */
static int build_stream(Merger *m, PyObject *chunks, PyObject *freq)
{
    Py_ssize_t n_chunks = PyList_GET_SIZE(chunks);
    Py_ssize_t size = 0;
    for (Py_ssize_t c = 0; c < n_chunks; c++) {
        PyObject *chunk = PyList_GET_ITEM(chunks, c);
        if (!PyBytes_Check(chunk)) {
            PyErr_SetString(PyExc_TypeError, "chunks must be a list of bytes");
            return -1;
        }
        size += PyBytes_GET_SIZE(chunk);
        if (size >= INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "the stream has 2**31 bytes or more");
            return -1;
        }
    }
    int unit = 1; /* every chunk counts once: no weight array */
    for (Py_ssize_t c = 0; c < n_chunks; c++) {
        unsigned long f = PyLong_AsUnsignedLong(PyList_GET_ITEM(freq, c));
        if (f == (unsigned long)-1 && PyErr_Occurred())
            return -1; /* OverflowError for a negative count too: Python's loop takes it */
        if (f > UINT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "a chunk counted 2**32 times or more");
            return -1;
        }
        unit &= f == 1;
    }
    m->size = size;
    size_t n = (size_t)(size ? size : 1);
    if (256 + m->total <= NONE16)
        m->tok16 = malloc(n * sizeof(uint16_t));
    else
        m->tok32 = malloc(n * sizeof(tok_t));
    m->link = malloc(n * sizeof(pos_t)); /* read only where a merge wrote it */
    m->starts = calloc(n / 8 + 1, 1);
    m->weight = unit ? NULL : malloc(n * sizeof(uint32_t));
    int64_t *count = calloc(65536, sizeof(int64_t));  /* byte pair -> weighted count */
    int64_t *listed = calloc(65536, sizeof(int64_t)); /* byte pair -> positions */
    uint32_t *index = malloc(65536 * sizeof(uint32_t));
    int ok = -1;
    if (!(m->tok16 || m->tok32) || !m->link || !m->starts || !(unit || m->weight) || !count || !listed
        || !index) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t pos = 0;
    for (Py_ssize_t c = 0; c < n_chunks; c++) {
        PyObject *chunk = PyList_GET_ITEM(chunks, c);
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(chunk);
        Py_ssize_t len = PyBytes_GET_SIZE(chunk);
        unsigned long f = PyLong_AsUnsignedLong(PyList_GET_ITEM(freq, c)); /* checked above */
        m->starts[pos >> 3] |= (uint8_t)(1u << (pos & 7));
        for (Py_ssize_t i = 0; i < len; i++, pos++) {
            set_tok(m, (pos_t)pos, s[i]);
            if (m->weight)
                m->weight[pos] = (uint32_t)f;
            if (i + 1 < len) {
                count[s[i] << 8 | s[i + 1]] += f;
                listed[s[i] << 8 | s[i + 1]]++;
            }
        }
    }
    for (int code = 0; code < 65536; code++) {
        index[code] = NO_PAIR;
        if (!listed[code])
            continue;
        index[code] = add_pair(m, (uint64_t)(code >> 8) << 32 | (uint64_t)(code & 255), listed[code]);
        if (index[code] == NO_PAIR) {
            PyErr_NoMemory();
            goto done;
        }
        m->pairs[index[code]].count = count[code];
    }
    for (pos_t i = 0; i + 1 < size; i++) /* positions in ascending order, pair by pair */
        if (!chunk_starts_at(m, i + 1)) {
            Pair *p = &m->pairs[index[get_tok(m, i) << 8 | get_tok(m, i + 1)]];
            p->at[p->len++] = i;
        }
    if (grow((void **)&m->heap, &m->heap_cap, m->n_pairs, sizeof(Entry)) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    for (uint32_t i = 0; i < m->n_pairs; i++) {
        Entry e = {m->pairs[i].count, m->pairs[i].at[0], i};
        m->heap[m->heap_len++] = e;
    }
    for (size_t i = m->heap_len / 2; i-- > 0;)
        sift_down(m, i);
    ok = 0;
done:
    free(count);
    free(listed);
    free(index);
    return ok;
}

static int Merger_init(Merger *m, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"chunks", "freq", "total", NULL};
    PyObject *chunks, *freq;
    long long total;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!L:Merger", kwlist, &PyList_Type, &chunks,
                                     &PyList_Type, &freq, &total))
        return -1;
    if (PyList_GET_SIZE(chunks) != PyList_GET_SIZE(freq)) {
        PyErr_SetString(PyExc_ValueError, "chunks and freq differ in length");
        return -1;
    }
    if (total < 0 || total > INT32_MAX - 256) {
        PyErr_SetString(PyExc_OverflowError, "total must be from 0 to 2**31 - 257");
        return -1;
    }
    if (m->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Merger is merging in another thread");
        return -1;
    }
    Merger_free_state(m);
    m->step = 0;
    m->total = total;
    m->broken = 0;
    if (build_stream(m, chunks, freq) < 0) {
        Merger_free_state(m);
        m->broken = 1;
        return -1;
    }
    return 0;
}

static PyObject *Merger_merge(Merger *m, PyObject *arg)
{
    Py_ssize_t limit = PyLong_AsSsize_t(arg);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    if (m->broken || !m->link) {
        PyErr_SetString(PyExc_RuntimeError, "Merger is not usable (its set-up or a merge failed)");
        return NULL;
    }
    if (m->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Merger is merging in another thread");
        return NULL;
    }
    if (limit > m->total - m->step)
        limit = (Py_ssize_t)(m->total - m->step);
    if (limit > MAX_BATCH)
        limit = MAX_BATCH;
    if (limit < 0)
        limit = 0;
    if (grow((void **)&m->results, &m->results_cap, (size_t)limit + 1, sizeof(Result)) < 0)
        return PyErr_NoMemory();
    Py_ssize_t made = 0;
    int status = MERGED;
    int64_t visited = 0;
    m->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    while (made < limit && visited < MERGE_BUDGET) {
        status = merge_one(m, &m->results[made], &visited);
        if (status != MERGED)
            break;
        made++;
    }
    Py_END_ALLOW_THREADS
    m->busy = 0;
    if (status < 0) {
        m->broken = 1;
        if (status == NO_MEMORY)
            return PyErr_NoMemory();
        PyErr_SetString(PyExc_SystemError, "the merge state is inconsistent (a bug in _merge.c)");
        return NULL;
    }
    PyObject *out = PyList_New(made);
    if (!out)
        return NULL;
    PyObject *total = PyLong_FromLongLong(m->total); /* the same in every tuple */
    if (!total) {
        Py_DECREF(out);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < made; i++) {
        /* (built field by field: Py_BuildValue parses its format again for every merge) */
        Result *r = &m->results[i];
        PyObject *t = PyTuple_New(6), *pair = PyTuple_New(2);
        if (t)
            PyList_SET_ITEM(out, i, t);
        if (!t || !pair) {
            Py_XDECREF(pair);
            Py_DECREF(total);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(pair, 0, PyLong_FromUnsignedLongLong(r->a));
        PyTuple_SET_ITEM(pair, 1, PyLong_FromUnsignedLongLong(r->b));
        PyTuple_SET_ITEM(t, 0, PyLong_FromLongLong(r->step));
        Py_INCREF(total);
        PyTuple_SET_ITEM(t, 1, total);
        PyTuple_SET_ITEM(t, 2, pair);
        PyTuple_SET_ITEM(t, 3, PyLong_FromUnsignedLongLong(r->new_id));
        PyTuple_SET_ITEM(t, 4, PyLong_FromLongLong(r->count));
        PyTuple_SET_ITEM(t, 5, PyLong_FromLongLong(r->merged));
        for (int k = 0; k < 6; k++)
            if (!PyTuple_GET_ITEM(t, k) || (k < 2 && !PyTuple_GET_ITEM(pair, k))) {
                Py_DECREF(total);
                Py_DECREF(out); /* (a tuple with a NULL item deallocates cleanly) */
                return NULL;
            }
    }
    Py_DECREF(total);
    return out;
}

static PyMethodDef Merger_methods[] = {
    {"merge", (PyCFunction)Merger_merge, METH_O,
     "merge(limit) -> list of (step, total, (a, b), new_id, count, merged): up to `limit` merges, "
     "fewer when they were large; empty when no pair is left or every merge asked for is made."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MergerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokexplorer.core.training._merge.Merger",
    .tp_doc = "Merger(chunks, freq, total): BPE merges over distinct chunks (bytes, in order of "
              "first occurrence), chunk i counting freq[i] times, up to `total` merges.",
    .tp_basicsize = sizeof(Merger),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Merger_init,
    .tp_dealloc = (destructor)Merger_dealloc,
    .tp_methods = Merger_methods,
};

static struct PyModuleDef merge_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tokexplorer.core.training._merge",
    .m_doc = "The BPE merge loop of tokexplorer.core.training.bpe, compiled (see _merge.c).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__merge(void)
{
    if (PyType_Ready(&MergerType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&merge_module);
    if (!module)
        return NULL;
    Py_INCREF(&MergerType);
    if (PyModule_AddObject(module, "Merger", (PyObject *)&MergerType) < 0) {
        Py_DECREF(&MergerType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
