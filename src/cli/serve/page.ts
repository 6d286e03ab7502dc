/**
 * The status page at `/`: one self-contained HTML document (no CDN, no build step, works offline), readable on
 * a phone. It polls `GET /api/runs` and follows the selected run's `GET /api/runs/:id/events` stream: the node
 * timeline, plan subtasks coloured by status as they change, recent events and the final state; and the AOF task
 * board (`GET /api/tasks`: the tasks of each status folder).
 *
 * The token: the page takes it from its own address (`/?token=…` or `/#token=…`) into sessionStorage, which is
 * scoped to this origin, port included, and removes it from the address (and so from history); every request sends
 * it as `Authorization: Bearer`. Not a cookie: cookies ignore ports, and another server on this host would receive
 * it. EventSource cannot send a header, so the event stream is read with fetch.
 */

import { createHash } from 'node:crypto'

export function statusPage(): string {
  return PAGE
}

/**
 * The page's response headers: nothing but its own inline script runs, it talks only to this origin, no other page
 * may frame it (clickjacking the cancel button), and it sends no Referer anywhere (the address may hold the token).
 */
export function pageHeaders(): Record<string, string> {
  scriptHash ??= createHash('sha256').update(SCRIPT).digest('base64')
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'content-security-policy': `default-src 'none'; script-src 'sha256-${scriptHash}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
  }
}

let scriptHash: string | undefined

const HEAD = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>tea serve</title>
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
header{background:#234;color:#fff;padding:.6em 1em}h1{font-size:1.1em;margin:0}
main{padding:.6em;display:grid;gap:.8em;grid-template-columns:minmax(0,1fr)}
@media(min-width:900px){main{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}}
section{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:.6em;overflow:auto}
h2{font-size:1em;margin:.1em 0 .5em}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.25em .4em;border-bottom:1px solid #eee;white-space:nowrap}
tr.sel{background:#e8f0fe}tbody tr{cursor:pointer}
.s{padding:0 .4em;border-radius:3px;font-size:.85em}
.running,.in_progress{background:#fff3c4}.completed,.done{background:#cdeccd}.failed{background:#f8cccc}
.interrupted,.queued,.pending{background:#e3e3e3}.cancelled,.skipped{background:#ddd;color:#555}
#dag{display:flex;gap:.6em;overflow-x:auto}#dag .level{display:flex;flex-direction:column;gap:.2em}
#dag span{display:block;padding:.2em .5em;border-radius:4px;border:1px solid #ccc;font-size:.85em;white-space:nowrap}
#dag small{color:#555}
pre{white-space:pre-wrap;word-break:break-word;font-size:.85em;margin:0}
ol{padding-left:1.4em;margin:0}#tasks{display:flex;flex-wrap:wrap;gap:.4em}
#tasks div{flex:1 1 8em;min-width:0;background:#f6f7f9;border-radius:4px;padding:.3em}
#tasks h3{font-size:.85em;margin:0 0 .2em}#tasks p{margin:.15em 0;font-size:.85em;word-break:break-word}#events li{font-family:monospace;font-size:.8em}
</style></head><body>
<header><h1>tea serve <span id="health"></span></h1></header>
<main>
<section><h2>Runs</h2><table><thead><tr><th>run</th><th>agent</th><th>status</th><th>node</th><th>duration</th></tr></thead>
<tbody id="runs"></tbody></table></section>
<section id="run"><h2>Run <span id="run-id">(select one)</span></h2>
<h2>Timeline</h2><ol id="timeline"></ol>
<h2>Plan</h2><div id="dag"></div>
<h2>Final state</h2><pre id="state"></pre></section>
<section><h2>Tasks</h2><div id="tasks"></div></section>
<section><h2>Recent events</h2><ol id="events"></ol></section>
</main>
`

const SCRIPT = `"use strict";
var selected=null,stream=null,$=function(id){return document.getElementById(id)};
// The token: from this page's address into sessionStorage (this origin only, port included), then out of the address.
var token=(function(){var q=new URLSearchParams(location.search),h=new URLSearchParams(location.hash.slice(1)),t=q.get("token")||h.get("token");
  try{if(t){sessionStorage.setItem("tea_token",t);history.replaceState(null,"",location.pathname)}return sessionStorage.getItem("tea_token")}catch(e){return t}})();
function auth(){return token?{authorization:"Bearer "+token}:{}}
function el(tag,text,cls){var e=document.createElement(tag);if(text!=null)e.textContent=text;if(cls)e.className=cls;return e}
function dur(r){var ms=Date.parse(r.updated_at)-Date.parse(r.created_at);return ms<1000?ms+" ms":(ms/1000).toFixed(1)+" s"}
function getJson(u){return fetch(u,{headers:auth(),cache:"no-store"}).then(function(r){
  if(r.status===401)$("health").textContent="needs its token: open /?token=<token>";if(!r.ok)throw new Error(u+": "+r.status);return r.json()})}
// Server-Sent Events over fetch (EventSource sends no Authorization header): one "data: {json}" line per event.
function follow(url,onEvent,onEnd){var ctl=new AbortController();
  fetch(url,{headers:auth(),cache:"no-store",signal:ctl.signal}).then(function(r){
    if(!r.ok||!r.body)throw new Error("events: "+r.status);
    var reader=r.body.getReader(),dec=new TextDecoder(),buf="";
    function pump(){return reader.read().then(function(x){if(x.done)return;buf+=dec.decode(x.value,{stream:true});
      for(var i=buf.indexOf("\\n\\n");i>=0;i=buf.indexOf("\\n\\n")){var f=buf.slice(0,i);buf=buf.slice(i+2);if(f.indexOf("data: ")===0)onEvent(JSON.parse(f.slice(6)))}
      return pump()})}
    return pump()}).then(onEnd,function(e){if(!ctl.signal.aborted)onEnd()});
  return ctl}
function refresh(){
  getJson("/api/health").then(function(h){$("health").textContent=h.version+" \u00b7 "+h.active+" running, "+h.queued+" queued"}).catch(function(){});
  getJson("/api/runs").then(function(runs){
    var body=$("runs");body.textContent="";
    runs.forEach(function(r){
      var tr=el("tr");tr.dataset.run=r.run_id;if(r.run_id===selected)tr.className="sel";
      tr.appendChild(el("td",r.run_id));tr.appendChild(el("td",r.agent));
      var td=el("td");td.appendChild(el("span",r.status,"s status "+r.status));if(r.error){var c=el("small"," "+r.error.code);c.title=r.error.message;td.appendChild(c)}tr.appendChild(td);
      tr.appendChild(el("td",r.node||"-"));tr.appendChild(el("td",dur(r)));
      tr.onclick=function(){select(r.run_id)};body.appendChild(tr)});
    if(!selected&&runs[0])select(runs[0].run_id)}).catch(function(){});
  getJson("/api/tasks").then(function(b){
    var box=$("tasks");box.textContent="";
    Object.keys(b.statuses).forEach(function(st){
      var col=el("div");col.dataset.status=st;col.appendChild(el("h3",st+" ("+b.statuses[st].length+")"));
      b.statuses[st].forEach(function(t){var p=el("p",t.title+(t.agent?" \u2192 "+t.agent:""));p.title=t.id;p.dataset.task=t.id;col.appendChild(p)});
      box.appendChild(col)})}).catch(function(){})}
function addEvent(id,ev){
  var li=el("li",id+" "+ev.type+(ev.node?" "+ev.node:"")+(ev.status?" "+ev.status:""));
  var list=$("events");list.insertBefore(li,list.firstChild);while(list.children.length>50)list.removeChild(list.lastChild)}
// The plan DAG: one column per dependency depth, each subtask a chip naming what it waits for. Chips are keyed by
// subtask id: the plan as a node first returns it has no plan id yet (executing the plan gives it one).
function drawPlan(subtasks,plan){
  var depth={},byId={};plan.subtasks.forEach(function(t){byId[t.id]=t});
  function d(id,seen){if(depth[id]!=null)return depth[id];if(seen[id]||!byId[id])return 0;seen[id]=1;
    var deps=byId[id].dependencies||[];return depth[id]=deps.length?1+Math.max.apply(null,deps.map(function(x){return d(x,seen)})):0}
  plan.subtasks.forEach(function(t){chip(subtasks,plan.id,t.id,d(t.id,{}),t.dependencies||[],t.status||"pending")})}
function chip(subtasks,planId,id,level,deps,status){
  var key=id,s=subtasks[key];if(s)return s;
  var dag=$("dag");while(dag.children.length<=level){var col=el("div",null,"level");dag.appendChild(col)}
  s=subtasks[key]=el("span",id,"subtask "+(status||"pending"));s.dataset.subtask=id;
  if(deps.length)s.appendChild(el("small"," \u2190 "+deps.join(", ")));
  dag.children[level].appendChild(s);return s}
function select(id){
  selected=id;if(stream)stream.abort();$("run-id").textContent=id;
  $("timeline").textContent="";$("dag").textContent="";$("state").textContent="";
  var subtasks={};
  stream=follow("/api/runs/"+encodeURIComponent(id)+"/events",function(ev){
    if(ev.type!=="llm_token")addEvent(id,ev);
    if(ev.type==="node_start"){var li=el("li",ev.node+" \u2026","running");li.id="n-"+ev.step;$("timeline").appendChild(li)}
    else if(ev.type==="node_end"){var n=$("n-"+ev.step)||$("timeline").appendChild(el("li"));n.textContent=ev.node+" "+ev.ms+" ms";n.className="done";
      var plan=ev.update&&ev.update.plan;if(plan&&Array.isArray(plan.subtasks))drawPlan(subtasks,plan)}
    else if(ev.type==="subtask"){var s=chip(subtasks,ev.planId,ev.id,0,[]);s.className="subtask "+ev.status;s.title=ev.status}
    else if(ev.type==="complete"){$("state").textContent=JSON.stringify(ev.state,null,2)}
    else if(ev.type==="error"){$("state").textContent="error: "+JSON.stringify(ev.error,null,2)}
    else if(ev.type==="interrupt"){$("state").textContent="paused "+ev.when+" "+ev.node}},refresh);
  refresh()}
refresh();setInterval(refresh,2000);
`

const PAGE = `${HEAD}<script>${SCRIPT}</script></body></html>
`
