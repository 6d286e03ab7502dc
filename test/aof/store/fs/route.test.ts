import { fsStores } from './fs-stores.ts'
import { routeContract } from '../route-contract.ts'

routeContract('filesystem', fsStores('tea-route-fs-'))
