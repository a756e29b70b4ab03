// The start-up every table page shares: the table's view, the log as it stood before the page
// opened (so a relieving dealer or a returning player sees the history), then the live feed.
import { get, liveTable, tablePath } from "./api.js";
import { replace, showRefusal, statusPills } from "./ui.js";

// `earlier`: how many events back the page shows; `onEvents(events, view)`: the page's own
// reading of pushed events, before the view they came with is drawn; `afterView(msg)`: after.
export async function startTable(tableId, { st, feed, setView, earlier, onEvents = () => {}, afterView = () => {} }) {
  try {
    setView(await get(tablePath(tableId)));
  } catch (e) {
    showRefusal(e);
    throw e;
  }
  try {
    feed.add(await get(tablePath(tableId, `/events?after=${Math.max(0, st.view.seq - earlier)}`)), st.view);
  } catch (e) {
    showRefusal(e);
  }
  return liveTable(tableId, {
    onMessage(msg, { reconnected }) {
      if (msg.events && msg.events.length) {
        feed.add(msg.events, msg.view || st.view, { away: reconnected });
        onEvents(msg.events, msg.view || st.view);
      }
      if (msg.view) setView(msg.view);
      afterView(msg);
    },
    onStatus(status) {
      st.connection = status;
      if (st.view) replace(document.getElementById("status-pills"), statusPills(st.view, status));
    },
  });
}
