/**
 * Expense categories: a fixed, published two-level tree (ids like `food/groceries`; a parent's id
 * has no slash). `general` is the default. Free labels — add_expense's `category`, the Category
 * column of Splitwise and Spliit exports — map to an id through the names and aliases below.
 */

export interface Category {
  category_id: string;
  name: string;
  parent_id: string | null;
}

/** [parent id, parent name, [child leaf, child name, ...aliases][]] — aliases are the other apps' labels. */
const TREE: Array<[string, string, Array<[string, string, ...string[]]>]> = [
  ['general', 'General', []],
  [
    'food',
    'Food and drink',
    [
      ['groceries', 'Groceries'],
      ['dining_out', 'Dining out', 'restaurant', 'restaurants'],
      ['liquor', 'Liquor', 'alcohol', 'drinks'],
    ],
  ],
  [
    'transport',
    'Transportation',
    [
      ['taxi', 'Taxi'],
      ['public', 'Bus and train', 'bus/train', 'bus', 'train'],
      ['car', 'Car'],
      ['fuel', 'Gas and fuel', 'gas/fuel', 'fuel'],
      ['parking', 'Parking'],
      ['plane', 'Plane', 'flights', 'flight'],
      ['bicycle', 'Bicycle'],
    ],
  ],
  [
    'travel',
    'Travel',
    [
      ['lodging', 'Lodging', 'hotel', 'accommodation'],
      ['activities', 'Activities'],
    ],
  ],
  [
    'home',
    'Home',
    [
      ['rent', 'Rent'],
      ['mortgage', 'Mortgage'],
      ['household_supplies', 'Household supplies'],
      ['furniture', 'Furniture'],
      ['electronics', 'Electronics'],
      ['maintenance', 'Maintenance'],
      ['services', 'Services'],
      ['pets', 'Pets'],
    ],
  ],
  [
    'utilities',
    'Utilities',
    [
      ['electricity', 'Electricity'],
      ['heat_gas', 'Heat and gas', 'heat/gas', 'heating'],
      ['water', 'Water'],
      ['internet', 'TV, phone and internet', 'tv/phone/internet', 'phone', 'internet'],
      ['trash', 'Trash'],
      ['cleaning', 'Cleaning'],
    ],
  ],
  [
    'entertainment',
    'Entertainment',
    [
      ['games', 'Games'],
      ['movies', 'Movies'],
      ['music', 'Music'],
      ['sports', 'Sports'],
    ],
  ],
  [
    'life',
    'Life',
    [
      ['childcare', 'Childcare'],
      ['clothing', 'Clothing'],
      ['education', 'Education'],
      ['gifts', 'Gifts'],
      ['insurance', 'Insurance'],
      ['medical', 'Medical expenses', 'medical', 'health'],
      ['taxes', 'Taxes'],
    ],
  ],
];

/** Every category, parents before their children, in a fixed order. */
export const CATEGORIES: readonly Category[] = TREE.flatMap(([id, name, children]) => [
  { category_id: id, name, parent_id: null },
  ...children.map(([leaf, childName]) => ({ category_id: `${id}/${leaf}`, name: childName, parent_id: id })),
]);

const DEFAULT_CATEGORY = 'general';
const IDS = new Set(CATEGORIES.map((c) => c.category_id));

/** Lower case, "&" → "and", runs of anything but letters, digits and "/" → one space. */
function normalize(label: string): string {
  return label
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N}/]+/gu, ' ')
    .trim();
}

const BY_LABEL = new Map<string, string>();
for (const [id, name, children] of TREE) {
  for (const l of [id, name]) BY_LABEL.set(normalize(l), id);
  for (const [leaf, childName, ...aliases] of children)
    for (const l of [`${id}/${leaf}`, leaf, childName, ...aliases]) BY_LABEL.set(normalize(l), `${id}/${leaf}`);
}
// The other apps' labels for "no category" and their parents' names.
for (const [label, id] of [
  ['uncategorized', 'general'],
  ['other', 'general'],
  ['transportation', 'transport'],
  ['food and drink', 'food'],
] as const)
  BY_LABEL.set(label, id);

export function isCategoryId(id: string): boolean {
  return IDS.has(id);
}

/** The category a free label names (an id, a name or another app's label, any case), or null. */
export function categoryFromLabel(label: string | null | undefined): string | null {
  if (!label) return null;
  return BY_LABEL.get(normalize(label)) ?? null;
}

/** A category and its children (a parent matches its children in filters). */
export function categoryWithChildren(id: string): string[] {
  return CATEGORIES.filter((c) => c.category_id === id || c.parent_id === id).map((c) => c.category_id);
}

/** category_id of a new expense: the id given, else the category a free label names, else general. */
export function resolveCategoryId(categoryId: string | undefined, label: string | null | undefined): string {
  return categoryId ?? categoryFromLabel(label) ?? DEFAULT_CATEGORY;
}
