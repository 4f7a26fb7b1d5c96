/** The console's entry: the shell in index.html, the views by route name. */
import { ConsoleApp, findShell } from './app.js';
import { forgetView } from './views/forget.js';
import { recordView } from './views/record.js';
import { recordsView } from './views/records.js';
import { searchView } from './views/search.js';
import { usageView } from './views/usage.js';

new ConsoleApp(findShell(document), {
  records: recordsView,
  search: searchView,
  record: recordView,
  forget: forgetView,
  usage: usageView,
}).start();
