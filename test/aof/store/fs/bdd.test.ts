import { bddContract } from '../bdd-contract.ts'
import { fsStores } from './fs-stores.ts'

bddContract('filesystem', fsStores('tea-bdd-fs-'))
