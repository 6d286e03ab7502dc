/**
 * The status page at `/`: one self-contained HTML document (no CDN, no build step, works offline), made for a
 * phone first. From it a person starts a run of any agent in the folder (a form built from the agent's
 * `state_schema` over its `initial_state`, a JSON editor for the rest), resumes a failed or paused run, cancels a
 * running one, and answers an interrupt (approve, edit the keys it asks for, reject). It polls `GET /api/runs`
 * (newest first) and follows the selected run's `GET /api/runs/:id/events` stream: the agent's graph as SVG with
 * its nodes coloured by state (and named in words: colour is never the only sign), the plan's subtasks with status
 * and duration, the node timeline, `run:` log lines, the final state or the error (code, message, hint); and the AOF
 * task board (`GET /api/tasks`).
 *
 * Everything a run says (state, errors, agent and node names, model replies) is hostile: it reaches the page only
 * as text (`textContent`, `title`, SVG text nodes), never as markup, and the graph's geometry is numbers the server
 * computed (agent-view.ts).
 *
 * The token: the page takes it from its own address (`/?token=…` or `/#token=…`) into sessionStorage, which is
 * scoped to this origin, port included, and removes it from the address (and so from history); every request sends
 * it as `Authorization: Bearer`. Not a cookie: cookies ignore ports, and another server on this host would receive
 * it. EventSource cannot send a header, so the event stream is read with fetch. `#run=<id>` selects a run (the
 * link a pause notification carries).
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
*{box-sizing:border-box}
body{font:15px/1.4 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24;overflow-wrap:anywhere}
header{background:#234;color:#fff;padding:.5em .8em;display:flex;flex-wrap:wrap;gap:.2em .8em;align-items:baseline}
h1{font-size:1.1em;margin:0}#health{font-size:.85em;opacity:.9}
main{padding:.5em;display:grid;gap:.6em;grid-template-columns:minmax(0,1fr)}
@media(min-width:900px){main{grid-template-columns:minmax(0,2fr) minmax(0,3fr)}#run{grid-row:span 3}}
section{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:.6em;min-width:0}
h2{font-size:1em;margin:.1em 0 .5em;display:flex;gap:.5em;align-items:center;flex-wrap:wrap}h3{font-size:.9em;margin:.8em 0 .3em}
button{font:inherit;padding:.35em .9em;border-radius:5px;border:1px solid #8a96a3;background:#eef1f4;cursor:pointer;min-height:2.2em}
button.go{background:#1f6f3f;border-color:#1f6f3f;color:#fff}button.stop{background:#a32020;border-color:#a32020;color:#fff}
button:disabled{opacity:.5}
input,select,textarea{font:inherit;max-width:100%;padding:.25em .35em;border:1px solid #aab4bf;border-radius:4px}
textarea{width:100%;font-family:monospace;font-size:.85em;min-height:4.5em}
label{display:block;margin:.35em 0}label span{display:block;font-size:.85em;color:#444}
label input[type=text],label input[type=number],label select{width:100%}
#runs{list-style:none;margin:0;padding:0}
#runs li{display:flex;flex-wrap:wrap;gap:.15em .5em;align-items:baseline;padding:.4em .3em;border-bottom:1px solid #eee;cursor:pointer}
#runs li.sel{background:#e8f0fe}#runs .id{font-family:monospace;font-size:.85em}#runs .meta{font-size:.8em;color:#555}
#runs .err{font-size:.8em;color:#a32020;flex-basis:100%}
.s{padding:0 .45em;border-radius:3px;font-size:.85em;font-weight:600}
.running,.in_progress{background:#fff3c4}.completed,.done{background:#cdeccd}.failed{background:#f8cccc;color:#8b0000}
.interrupted,.waiting{background:#cfe0ff}.queued,.pending{background:#e3e3e3}.cancelled,.skipped{background:#ddd;color:#555}
.box{border-radius:5px;padding:.5em .6em;margin:.5em 0}
#error-box{background:#fdecec;border:1px solid #e3a0a0}#paused-box{background:#eef4ff;border:1px solid #a9c2f0}
.box p{margin:.2em 0}.code{font-family:monospace;font-weight:700}
.row{display:flex;flex-wrap:wrap;gap:.4em;margin:.4em 0}
#msg{font-size:.85em;min-height:1.2em;margin:.2em 0}#msg.bad{color:#a32020}
#graph svg{display:block;width:100%;height:auto}
#graph rect{stroke:#8a96a3;stroke-width:1;fill:#fff}#graph .done rect{fill:#cdeccd;stroke:#2e7d32}
#graph .running rect{fill:#fff3c4;stroke:#b88a00;stroke-width:2}#graph .failed rect{fill:#f3a5a5;stroke:#c62828;stroke-width:2.5}
#graph .waiting rect{fill:#cfe0ff;stroke:#2f5fb3;stroke-width:2}#graph .pill rect{fill:#234;stroke:#234}#graph .pill text{fill:#fff}
#graph path{fill:none;stroke:#8a96a3;stroke-width:1.3}#graph path.dashed{stroke-dasharray:4 3}
#graph text{font:12px system-ui,sans-serif;fill:#1b1f24}#graph text.st{font-size:10px;fill:#333}#graph text.lbl{font-size:10px;fill:#555}
#legend{display:flex;flex-wrap:wrap;gap:.3em .8em;list-style:none;padding:0;margin:.3em 0;font-size:.8em}
#legend i{display:inline-block;width:.9em;height:.9em;border:1px solid #888;border-radius:2px;margin-right:.3em;vertical-align:-.1em}
#dag{display:flex;flex-wrap:wrap;gap:.6em}#dag .level{display:flex;flex-direction:column;gap:.2em;min-width:0}
#dag span{display:block;padding:.2em .5em;border-radius:4px;border:1px solid #ccc;font-size:.85em}
#dag small{display:block;color:#444}
pre{white-space:pre-wrap;word-break:break-word;font-size:.85em;margin:0;max-height:24em;overflow:auto}
ol{padding-left:1.4em;margin:0}#timeline li{font-size:.9em}
#tasks{display:flex;flex-wrap:wrap;gap:.4em}
#tasks div{flex:1 1 8em;min-width:0;background:#f6f7f9;border-radius:4px;padding:.3em}
#tasks h3{font-size:.85em;margin:0 0 .2em}#tasks p{margin:.15em 0;font-size:.85em}
#events li{font-family:monospace;font-size:.8em}
[hidden]{display:none!important}
</style></head><body>
<header><h1>tea serve</h1><span id="health"></span></header>
<main>
<section id="runs-box"><h2>Runs <button type="button" id="new-run">New run</button></h2>
<form id="start" hidden novalidate><h3>Start a run</h3>
<label><span>Agent</span><select id="agent"></select></label>
<p id="agent-desc"></p><div id="fields"></div>
<details id="json-box"><summary>Input as JSON</summary><textarea id="input-json" spellcheck="false" aria-label="input as JSON">{}</textarea></details>
<div class="row"><button type="submit" class="go" id="start-btn">Start</button><button type="button" id="close-start">Close</button></div>
<p id="start-msg" role="status"></p></form>
<ul id="runs"></ul></section>
<section id="run"><h2>Run <span id="run-id">(select one)</span> <span id="run-status"></span></h2>
<p id="run-meta"></p>
<div class="row" id="actions"></div><p id="msg" role="status"></p>
<div id="error-box" class="box" hidden><p><span class="code" id="err-code"></span> <span id="err-node"></span></p><p id="err-message"></p><p id="err-hint"></p></div>
<div id="paused-box" class="box" hidden><p><b>Waiting for you:</b> <span id="paused-message"></span></p><p id="paused-where"></p><div id="paused-fields"></div>
<div class="row"><button type="button" class="go" id="approve">Approve</button><button type="button" class="stop" id="reject">Reject</button></div></div>
<details id="resume-box" hidden><summary>Input to merge before resuming (JSON)</summary><textarea id="resume-json" spellcheck="false" aria-label="input to merge">{}</textarea></details>
<h3>Graph</h3><div id="graph"><svg id="svg" role="img" aria-label="the agent's graph"></svg></div>
<ul id="legend"><li><i class="done"></i>done</li><li><i class="running"></i>running</li><li><i class="failed"></i>failed</li><li><i class="waiting"></i>waiting</li><li><i></i>not run</li></ul>
<div id="plan-box" hidden><h3>Plan</h3><div id="dag"></div></div>
<h3>Timeline</h3><ol id="timeline"></ol>
<h3>State</h3><pre id="state"></pre></section>
<section><h2>Recent events</h2><ol id="events"></ol></section>
<section><h2>Tasks</h2><div id="tasks"></div></section>
</main>
`

const SCRIPT = `"use strict";
var $=function(id){return document.getElementById(id)};
// Maps keyed by names from runs (node names, subtask ids): no prototype, so "__proto__" is a name like any other.
function map(){return Object.create(null)}
var selected=null,stream=null,detail=null,subtasks=map(),graphs=map(),nodeState=map(),nodeMs=map(),runsSeen=map(),agentsLoaded=false,NS=$("svg").namespaceURI;
var params=(function(){var q=new URLSearchParams(location.search),h=new URLSearchParams(location.hash.slice(1));return {token:q.get("token")||h.get("token"),run:h.get("run")||q.get("run")}})();
// The token: from this page's address into sessionStorage (this origin only, port included), then out of the address.
var token=(function(){var t=params.token;
  try{if(t)sessionStorage.setItem("tea_token",t);if(t||params.run)history.replaceState(null,"",location.pathname);return sessionStorage.getItem("tea_token")}catch(e){return t}})();
function auth(){return token?{authorization:"Bearer "+token}:{}}
function el(tag,text,cls){var e=document.createElement(tag);if(text!=null)e.textContent=text;if(cls)e.className=cls;return e}
function svg(tag,attrs){var e=document.createElementNS(NS,tag);for(var k in attrs)e.setAttribute(k,attrs[k]);return e}
function word(s){return String(s||"").replace(/[^a-z_]/g,"")}
// Durations as people read them: 850 ms, 1.2 s, 3 min, 1.5 h.
function fmt(ms){if(!(ms>=0))return "";if(ms<1000)return Math.round(ms)+" ms";if(ms<60000)return (ms/1000).toFixed(1)+" s";
  if(ms<3600000)return Math.round(ms/60000)+" min";return (ms/3600000).toFixed(1)+" h"}
function runMs(r){var end=r.status==="running"||r.status==="queued"?Date.now():Date.parse(r.updated_at);return end-Date.parse(r.created_at)}
function shortId(id){return id.length>16?id.slice(0,7)+"\\u2026"+id.slice(-6):id}
function getJson(u){return fetch(u,{headers:auth(),cache:"no-store"}).then(function(r){
  if(r.status===401)$("health").textContent="needs its token: open /?token=<token>";return r.json().then(function(b){if(!r.ok)throw apiError(b,r.status);return b})})}
function apiError(b,status){var e=b&&b.error||{};var x=new Error((e.code?e.code+": ":"")+(e.message||("HTTP "+status)));x.body=e;return x}
function post(u,body){return fetch(u,{method:"POST",headers:Object.assign({"content-type":"application/json"},auth()),body:JSON.stringify(body||{}),cache:"no-store"})
  .then(function(r){return r.json().then(function(b){if(!r.ok)throw apiError(b,r.status);return b})})}
function say(text,bad){var m=$("msg");m.textContent=text;m.className=bad?"bad":""}
// Server-Sent Events over fetch (EventSource sends no Authorization header): one "data: {json}" line per event.
function follow(url,onEvent,onEnd){var ctl=new AbortController();
  fetch(url,{headers:auth(),cache:"no-store",signal:ctl.signal}).then(function(r){
    if(!r.ok||!r.body)throw new Error("events: "+r.status);
    var reader=r.body.getReader(),dec=new TextDecoder(),buf="";
    function pump(){return reader.read().then(function(x){if(x.done)return;buf+=dec.decode(x.value,{stream:true});
      for(var i=buf.indexOf("\\n\\n");i>=0;i=buf.indexOf("\\n\\n")){var f=buf.slice(0,i);buf=buf.slice(i+2);if(f.indexOf("data: ")===0)onEvent(JSON.parse(f.slice(6)))}
      return pump()})}
    return pump()}).then(function(){if(!ctl.signal.aborted)onEnd()},function(){if(!ctl.signal.aborted)onEnd()});
  return ctl}

// --- the run list: newest first, the newest selected unless the address names one ---
function refresh(){
  getJson("/api/health").then(function(h){$("health").textContent=h.version+" \\u00b7 "+h.active+" running, "+h.queued+" queued"}).catch(function(){});
  getJson("/api/runs").then(function(runs){
    runs.sort(function(a,b){return Date.parse(b.created_at)-Date.parse(a.created_at)});
    var body=$("runs");body.textContent="";
    // The newest 200 (a board keeps every run until tea runs prune): a phone need not draw a thousand rows.
    runs.slice(0,200).forEach(function(r){
      var li=el("li");li.dataset.run=r.run_id;if(r.run_id===selected)li.className="sel";
      li.appendChild(el("span",r.status,"s status "+word(r.status)));
      var id=el("span",shortId(r.run_id),"id");id.title=r.run_id;li.appendChild(id);
      li.appendChild(el("span",r.agent,"agent"));
      li.appendChild(el("span",(r.node?r.node+" \\u00b7 ":"")+fmt(runMs(r)),"meta"));
      if(r.error){var e=el("span",r.error.code+": "+r.error.message,"err");li.appendChild(e)}
      li.tabIndex=0;li.onclick=function(){select(r.run_id)};li.onkeydown=function(e){if(e.key==="Enter"||e.key===" "){e.preventDefault();select(r.run_id)}};body.appendChild(li);
      if(r.run_id===selected&&runsSeen[r.run_id]&&runsSeen[r.run_id]!==r.status)loadDetail();
      runsSeen[r.run_id]=r.status});
    if(runs.length>200)body.appendChild(el("li",(runs.length-200)+" older runs not shown (tea runs lists them)","meta"));
    if(!selected){var want=params.run&&runs.some(function(r){return r.run_id===params.run})?params.run:runs[0]&&runs[0].run_id;if(want)select(want)}
  }).catch(function(){});
  getJson("/api/tasks").then(function(b){
    var box=$("tasks");box.textContent="";
    Object.keys(b.statuses).forEach(function(st){
      var col=el("div");col.dataset.status=st;col.appendChild(el("h3",st+" ("+b.statuses[st].length+")"));
      b.statuses[st].forEach(function(t){var p=el("p",t.title+(t.agent?" \\u2192 "+t.agent:""));p.title=t.id;p.dataset.task=t.id;col.appendChild(p)});
      box.appendChild(col)})}).catch(function(){})}

// --- the start form: a field per state_schema key, typed; the JSON editor for anything else ---
function openStart(){$("start").hidden=false;if(!agentsLoaded){agentsLoaded=true;getJson("/api/agents").then(function(list){
  var s=$("agent");s.textContent="";list.forEach(function(a){var o=el("option",a.name);o.value=a.file;s.appendChild(o)});if(list.length)loadAgent(list[0].file);else $("start-msg").textContent="no agents in the agents folder"})
  .catch(function(e){agentsLoaded=false;$("start-msg").textContent=e.message})}}
function agentGraph(file){return graphs[file]||(graphs[file]=getJson("/api/agents/"+encodeURIComponent(file)).catch(function(e){delete graphs[file];throw e}))}
function loadAgent(file){$("fields").textContent="";$("agent-desc").textContent="";$("start-msg").textContent="";
  agentGraph(file).then(function(a){
    $("agent-desc").textContent=a.description||"";var init=a.initial_state||{};
    a.fields.forEach(function(f){var lab=el("label"),cap=el("span",f.key+" ("+f.type+")"),input,v=init[f.key];lab.appendChild(cap);
      if(f.type==="boolean"){input=el("select");["","true","false"].forEach(function(x){var o=el("option",x||"(as the agent says)");o.value=x;input.appendChild(o)})}
      else if(f.type==="string"){input=el("input");input.type="text";if(typeof v==="string")input.placeholder=v}
      else if(f.type==="integer"||f.type==="number"){input=el("input");input.type="number";input.step=f.type==="integer"?"1":"any";if(typeof v==="number")input.placeholder=String(v)}
      else{input=el("textarea");input.placeholder=v===undefined?"JSON":JSON.stringify(v)}
      input.dataset.key=f.key;input.dataset.type=f.type;lab.appendChild(input);$("fields").appendChild(lab)});
    $("json-box").open=!a.fields.length}).catch(function(e){$("start-msg").textContent=e.message})}
function formInput(){var input=JSON.parse($("input-json").value||"{}");if(!input||typeof input!=="object"||Array.isArray(input))throw new Error("the JSON input must be an object");
  Array.prototype.forEach.call($("fields").querySelectorAll("[data-key]"),function(f){var v=f.value,k=f.dataset.key,t=f.dataset.type;if(v==="")return;
    if(t==="string")input[k]=v;else if(t==="boolean")input[k]=v==="true";
    else if(t==="integer"||t==="number"){var n=Number(v);if(!isFinite(n)||(t==="integer"&&n%1))throw new Error(k+" must be "+(t==="integer"?"a whole number":"a number"));input[k]=n}
    else{try{input[k]=JSON.parse(v)}catch(e){throw new Error(k+" is not JSON: "+e.message)}}});
  return input}

// --- the selected run ---
// keep: the same run again (resumed): what its graph, timeline and plan showed stays, and its new events add to it.
function select(id,keep){
  keep=keep&&id===selected;selected=id;if(stream)stream.abort();stream=null;detail=null;
  if(!keep){nodeState=map();nodeMs=map();subtasks=map();$("timeline").textContent="";$("dag").textContent="";$("plan-box").hidden=true}
  $("run-id").textContent=id;$("state").textContent="";
  $("actions").textContent="";$("error-box").hidden=true;$("paused-box").hidden=true;$("resume-box").hidden=true;$("run-status").textContent="";$("run-meta").textContent="";say("");
  Array.prototype.forEach.call($("runs").children,function(li){li.className=li.dataset.run===id?"sel":""});
  stream=follow("/api/runs/"+encodeURIComponent(id)+"/events",function(ev){onEvent(id,ev)},function(){stream=null;if(selected===id){loadDetail();refresh()}});
  loadDetail()}
function onEvent(id,ev){
  if(id!==selected)return;
  if(ev.type!=="llm_token")addEvent(id,ev);
  if(ev.type==="node_start"){nodeState[ev.node]="running";var li=el("li",ev.node+" \\u2026","running");li.id="n-"+ev.step;$("timeline").appendChild(li)}
  else if(ev.type==="node_end"){if(nodeState[ev.node]!=="failed")nodeState[ev.node]="done";nodeMs[ev.node]=(nodeMs[ev.node]||0)+ev.ms;var n=$("n-"+ev.step)||$("timeline").appendChild(el("li"));n.textContent=ev.node+" \\u00b7 "+fmt(ev.ms);n.className="done";
    var plan=ev.update&&ev.update.plan;if(plan&&Array.isArray(plan.subtasks))drawPlan(subtasks,plan)}
  else if(ev.type==="subtask")subtaskEvent(subtasks,ev);
  else if(ev.type==="log"){$("timeline").appendChild(el("li",ev.node+": "+ev.message,"log"))}
  else if(ev.type==="complete"){$("state").textContent=JSON.stringify(ev.state,null,2)}
  else if(ev.type==="error"){if(ev.node)nodeState[ev.node]="failed";showError(ev.error||{},ev.node)}
  else if(ev.type==="interrupt"){nodeState[ev.node]=ev.when==="before"?"waiting":"done";loadDetail()}
  paintGraph()}
function addEvent(id,ev){
  var text=ev.type==="log"?ev.node+": "+ev.message:ev.type+(ev.node?" "+ev.node:"")+(ev.status?" "+ev.status:"")+(ev.ms!=null?" "+fmt(ev.ms):"");
  var li=el("li",shortId(id)+" "+text);var list=$("events");list.insertBefore(li,list.firstChild);while(list.children.length>50)list.removeChild(list.lastChild)}
function showError(err,node){$("error-box").hidden=false;$("err-code").textContent=err.code||"ERROR";
  $("err-node").textContent=node||err.node?"in node "+(node||err.node):"";$("err-message").textContent=err.message||"";$("err-hint").textContent=err.hint?"hint: "+err.hint:err.about?"what it means: "+err.about:""}
function loadDetail(){var id=selected;if(!id)return;
  getJson("/api/runs/"+encodeURIComponent(id)).then(function(r){if(id!==selected)return;detail=r;
    $("run-status").textContent="";$("run-status").appendChild(el("span",r.status,"s status "+word(r.status)));
    $("run-meta").textContent=r.agent?r.agent+(r.node?" \\u00b7 node "+r.node:"")+(r.created_at?" \\u00b7 "+fmt(runMs(r)):""):"";
    if(r.status==="failed"&&r.error){showError(r.error,r.error.node);if(r.error.node)nodeState[r.error.node]="failed"}else $("error-box").hidden=true;
    if(r.status==="interrupted"&&r.paused){nodeState[r.paused.node]=r.paused.when==="before"?"waiting":"done";showPaused(r.paused)}else $("paused-box").hidden=true;
    if(r.status==="completed")$("state").textContent=JSON.stringify(r.state,null,2);
    else if(r.status!=="queued"&&!$("state").textContent)$("state").textContent=JSON.stringify(r.state,null,2);
    // A plan in the state (a run this serve did not run, or a late look): its subtasks as the state last had them.
    var plan=r.state&&r.state.plan;if(plan&&Array.isArray(plan.subtasks))drawPlan(subtasks,plan);
    buttons(r);
    if(r.agent_file)agentGraph(r.agent_file).then(function(a){if(id===selected){drawGraph(a.graph);paintGraph()}},function(){$("svg").textContent=""});
    else $("svg").textContent=""}).catch(function(e){say(e.message,true)})}
function buttons(r){var box=$("actions");box.textContent="";$("resume-box").hidden=true;
  function add(label,cls,act){var b=el("button",label,cls);b.type="button";b.onclick=function(){b.disabled=true;act().then(function(){b.disabled=false},function(e){b.disabled=false;say(e.message,true)})};box.appendChild(b)}
  if(r.status==="running"||r.status==="queued")add("Cancel","stop",function(){return post("/api/runs/"+encodeURIComponent(r.run_id)+"/cancel").then(function(){say("cancelling: the run stops after its current node")})});
  if(r.status==="failed"||r.status==="cancelled"||r.status==="interrupted"){$("resume-box").hidden=false;
    add("Resume","go",function(){var input=JSON.parse($("resume-json").value||"{}");return resume(r.run_id,input)})}}
function resume(id,input){return post("/api/runs/"+encodeURIComponent(id)+"/resume",{input:input}).then(function(){say("resumed");select(id,true);refresh()})}
// An interrupt: its message, the keys it asks for (prefilled with their values), approve (with edits) or reject.
function showPaused(p){$("paused-box").hidden=false;$("paused-message").textContent=p.message;$("paused-where").textContent="paused "+p.when+" node "+p.node;
  var box=$("paused-fields");box.textContent="";
  p.keys.filter(function(k){return k!=="approved"}).forEach(function(k){var v=p.values[k],lab=el("label"),input;lab.appendChild(el("span",k));
    if(typeof v==="string"||v===undefined){input=el("input");input.type="text";input.value=v===undefined?"":v;input.dataset.json="0"}
    else{input=el("textarea");input.value=JSON.stringify(v,null,2);input.dataset.json="1"}
    input.dataset.key=k;input.dataset.orig=input.value;lab.appendChild(input);box.appendChild(lab)})}
function edits(){var out={};Array.prototype.forEach.call($("paused-fields").querySelectorAll("[data-key]"),function(f){if(f.value===f.dataset.orig)return;
  if(f.dataset.json==="1"){try{out[f.dataset.key]=JSON.parse(f.value)}catch(e){throw new Error(f.dataset.key+" is not JSON: "+e.message)}}else out[f.dataset.key]=f.value});return out}
function answer(approved){if(!detail)return;var id=detail.run_id;try{var input=approved?edits():{};input.approved=approved;
  $("approve").disabled=$("reject").disabled=true;resume(id,input).catch(function(e){say(e.message,true)}).then(function(){$("approve").disabled=$("reject").disabled=false})}catch(e){say(e.message,true)}}

// --- the graph: laid out by the server, coloured here by what the events and the run record say ---
function drawGraph(g){var s=$("svg");s.textContent="";s.setAttribute("viewBox","0 0 "+g.width+" "+g.height);s.style.maxWidth=g.width+"px";
  var defs=svg("defs",{}),m=svg("marker",{id:"arrow",viewBox:"0 0 10 10",refX:"9",refY:"5",markerWidth:"7",markerHeight:"7",orient:"auto-start-reverse"});
  m.appendChild(svg("path",{d:"M0 0L10 5L0 10z",style:"fill:#8a96a3;stroke:none"}));defs.appendChild(m);s.appendChild(defs);
  g.edges.forEach(function(e){var p=svg("path",{d:e.path,"marker-end":"url(#arrow)"});if(e.dashed)p.setAttribute("class","dashed");s.appendChild(p);
    if(e.label){var t=svg("text",{x:e.lx+3,y:e.ly,"class":"lbl"});t.textContent=e.label.length>22?e.label.slice(0,21)+"\\u2026":e.label;s.appendChild(t)}});
  g.nodes.forEach(function(n){var grp=svg("g",{"class":n.kind==="node"?"node":"pill"});grp.dataset.node=n.kind==="node"?n.id:"";
    grp.appendChild(svg("rect",{x:n.x,y:n.y,width:n.w,height:n.h,rx:n.kind==="node"?5:14}));
    var title=svg("title",{});title.textContent=n.id+(n.uses?" ("+n.uses+")":"");grp.appendChild(title);
    var name=n.kind==="start"?"start":n.kind==="end"?"end":n.id;
    var t=svg("text",{x:n.x+8,y:n.y+(n.kind==="node"?16:18)});t.textContent=name.length>20?name.slice(0,19)+"\\u2026":name;grp.appendChild(t);
    if(n.kind==="node"){var st=svg("text",{x:n.x+8,y:n.y+32,"class":"st"});st.textContent=n.uses||"";grp.appendChild(st);grp._uses=n.uses||""}
    s.appendChild(grp)})}
function paintGraph(){Array.prototype.forEach.call($("svg").querySelectorAll("g.node"),function(g){var st=nodeState[g.dataset.node]||"";
  g.setAttribute("class","node "+st);g.dataset.state=st||"pending";var label=g.querySelector("text.st");var ms=nodeMs[g.dataset.node];
  if(label)label.textContent=st?st+(ms!=null?" \\u00b7 "+fmt(ms):g._uses?" \\u00b7 "+g._uses:""):g._uses})}

// --- the plan: one column per dependency depth, each subtask with its status and duration ---
function drawPlan(subtasks,plan){
  var depth=map(),byId=map(),list=plan.subtasks.filter(function(t){return t&&typeof t.id==="string"}).slice(0,500);
  function deps(t){return Array.isArray(t.dependencies)?t.dependencies.filter(function(x){return typeof x==="string"}):[]}
  list.forEach(function(t){byId[t.id]=t});
  function d(id,seen){if(depth[id]!=null)return depth[id];if(seen[id]||!byId[id])return 0;seen[id]=1;
    var ds=deps(byId[id]);return depth[id]=ds.length?1+Math.max.apply(null,ds.map(function(x){return d(x,seen)})):0}
  list.forEach(function(t){var c=chip(subtasks,t.id,d(t.id,map()),deps(t));if(typeof t.status==="string"&&!c._status)setChip(c,t.status)})}
function chip(subtasks,id,level,deps){var s=subtasks[id];if(s)return s;$("plan-box").hidden=false;
  var dag=$("dag");while(dag.children.length<=level)dag.appendChild(el("div",null,"level"));
  s=subtasks[id]=el("span",id,"subtask pending");s.dataset.subtask=id;
  if(deps.length)s.appendChild(el("small","\\u2190 "+deps.join(", "),"deps"));
  s._meta=s.appendChild(el("small","pending","meta"));dag.children[level].appendChild(s);return s}
function setChip(s,status){s._status=status;s.className="subtask "+word(status);s.title=status;
  s._meta.textContent=status+(s._started&&s._ended?" \\u00b7 "+fmt(s._ended-s._started):"")}
function subtaskEvent(subtasks,ev){var s=chip(subtasks,ev.id,0,[]),at=ev.at||Date.now();
  if(ev.status==="in_progress"&&!s._started)s._started=at;
  if(ev.status==="completed"||ev.status==="failed"||ev.status==="skipped"){s._ended=at;if(!s._started)s._started=at}
  setChip(s,ev.status)}

$("new-run").onclick=function(){if($("start").hidden)openStart();else $("start").hidden=true};
$("close-start").onclick=function(){$("start").hidden=true};
$("agent").onchange=function(){loadAgent($("agent").value)};
$("start").onsubmit=function(e){e.preventDefault();var m=$("start-msg");
  try{var input=formInput()}catch(x){m.textContent=x.message;return}
  $("start-btn").disabled=true;m.textContent="starting\\u2026";
  post("/api/runs",{agent:$("agent").value,input:input}).then(function(r){m.textContent="started "+r.run_id+" ("+r.status+")";select(r.run_id);refresh()},
    function(x){m.textContent=x.message}).then(function(){$("start-btn").disabled=false})};
$("approve").onclick=function(){answer(true)};$("reject").onclick=function(){answer(false)};
refresh();setInterval(refresh,2000);
`

const PAGE = `${HEAD}<script>${SCRIPT}</script></body></html>
`
